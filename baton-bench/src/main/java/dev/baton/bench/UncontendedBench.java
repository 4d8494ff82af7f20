package dev.baton.bench;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.util.concurrent.TimeUnit;

/** W1: one thread, acquire + release of one lock name per invocation, no other client. */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class UncontendedBench {
    @Param({"baton-lease-pg"})
    public String subject;

    private Subject.Client client;
    private String lock;

    @Setup
    public void open() throws Exception {
        client = Subjects.byId(subject).open("w1-" + subject);
        lock = "w1-" + subject;
    }

    @Benchmark
    public void acquireRelease() throws Exception {
        client.acquire(lock).release();
    }

    @TearDown
    public void close() throws Exception {
        client.close();
    }
}
