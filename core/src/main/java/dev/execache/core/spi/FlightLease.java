package dev.execache.core.spi;

/**
 * The right to run one execution that others are waiting for. Closing it lets the next
 * waiter in; closing it twice does nothing.
 */
@FunctionalInterface
public interface FlightLease extends AutoCloseable {
    /** The lease of a store that only coordinates inside one process. */
    FlightLease LOCAL = () -> {
    };

    @Override
    void close();
}
