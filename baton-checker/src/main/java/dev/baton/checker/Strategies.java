package dev.baton.checker;

import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/** The strategies {@code --strategy} knows by name; any other value is taken as a class name. */
final class Strategies {
    private static final Map<String, Supplier<CheckStrategy>> BY_NAME = new TreeMap<>(Map.of(
            "lease", JdbcLeaseStrategy::new,
            "session", JdbcSessionStrategy::new,
            "run-once", JdbcRunOnceStrategy::new,
            "redis", RedisStrategy::new,
            "zookeeper", ZooKeeperStrategy::new));

    private Strategies() {
    }

    /**
     * The strategy with this name, or an instance of the named class.
     *
     * @throws IllegalArgumentException naming the known strategies
     */
    static CheckStrategy byName(String name) {
        Supplier<CheckStrategy> known = BY_NAME.get(name);
        if (known != null) {
            return known.get();
        }
        if (name.contains(".")) {
            try {
                Object o = Class.forName(name).getConstructor().newInstance();
                if (o instanceof CheckStrategy s) {
                    return s;
                }
                throw new IllegalArgumentException("--strategy: class " + name + " does not implement "
                        + CheckStrategy.class.getName());
            } catch (ReflectiveOperationException e) {
                throw new IllegalArgumentException("--strategy: cannot load class " + name + ": " + e, e);
            }
        }
        throw new IllegalArgumentException("--strategy: unknown strategy '" + name + "'; known: "
                + String.join(", ", BY_NAME.keySet()) + " (or the name of a class implementing "
                + CheckStrategy.class.getName() + ")");
    }

    /**
     * The strategy to check {@code url} with: {@code lease}, the default, on a {@code redis://} URL is Redis's
     * lease ({@code redis}), on a {@code zookeeper://} URL ZooKeeper's locks ({@code zookeeper}); anything else as
     * {@link #byName}.
     */
    static CheckStrategy forUrl(String name, String url) {
        if (name.equals("lease") && RedisStrategy.isRedis(url)) {
            return new RedisStrategy();
        }
        if (name.equals("lease") && ZooKeeperStrategy.isZooKeeper(url)) {
            return new ZooKeeperStrategy();
        }
        return byName(name);
    }

    /** The value to pass to a worker so it loads the same strategy. */
    static String workerArgument(CheckStrategy strategy) {
        return BY_NAME.containsKey(strategy.name()) && BY_NAME.get(strategy.name()).get().getClass()
                == strategy.getClass() ? strategy.name() : strategy.getClass().getName();
    }
}
