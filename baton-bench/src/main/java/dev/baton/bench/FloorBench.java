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

/** W0: one server operation per invocation, on one connection. */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class FloorBench {
    @Param({"postgresql-select1"})
    public String floor;

    private Floors.Op op;

    @Setup
    public void open() throws Exception {
        op = Floors.open(floor);
    }

    @Benchmark
    public void roundTrip() throws Exception {
        op.run();
    }

    @TearDown
    public void close() throws Exception {
        op.close();
    }
}
