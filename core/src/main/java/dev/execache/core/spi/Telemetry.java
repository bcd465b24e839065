package dev.execache.core.spi;

import java.util.Map;

/**
 * Where the cache and the adapters report what they do for tracing and metrics (an adapter over
 * OpenTelemetry, or {@link #NONE}). Trace context crosses this port as W3C Trace Context fields
 * ({@code traceparent}, {@code tracestate}): the form it has in a request's {@code _meta} and in
 * HTTP headers, so that neither core nor the adapters need a tracing library. Every method does
 * nothing unless overridden.
 */
public interface Telemetry {
    /** Reports nothing. */
    Telemetry NONE = new Telemetry() {
    };

    /** The W3C Trace Context field naming the parent span. */
    String TRACEPARENT = "traceparent";
    /** The W3C Trace Context field carrying vendors' trace state. */
    String TRACESTATE = "tracestate";

    /** What a span stands for, as tracing backends group them. */
    enum Kind {
        /** A request this process answers (an MCP request). */
        SERVER,
        /** A request this process sends (a call to a downstream server). */
        CLIENT,
        /** Work inside this process (a cache lookup, a flight wait, a run). */
        INTERNAL
    }

    /** One span: it is the current span of the thread that started it until it is closed there. */
    interface Span extends AutoCloseable {
        /** A span that records nothing. */
        Span NONE = new Span() {
        };

        /** Sets an attribute (named as the semantic conventions name it); a null value sets nothing. */
        default Span set(String attribute, String value) {
            return this;
        }

        /** Sets a numeric attribute. */
        default Span set(String attribute, long value) {
            return this;
        }

        /**
         * Marks the span failed: {@code error.type} is set to {@code type} (a low-cardinality name or a
         * JSON-RPC code) and the status to error with {@code message} (null for none).
         */
        default void failed(String type, String message) {
        }

        /** Ends the span and makes its parent current again. */
        @Override
        default void close() {
        }
    }

    /**
     * Starts a span and makes it the current span of this thread until it is closed.
     *
     * @param parent W3C Trace Context fields of the parent ({@link #TRACEPARENT}, {@link #TRACESTATE}),
     *     for a parent in another process or on another thread; empty: the current span of this thread
     */
    default Span start(String name, Kind kind, Map<String, String> parent) {
        return Span.NONE;
    }

    /** Starts an internal span, a child of the current span of this thread. */
    default Span start(String name) {
        return start(name, Kind.INTERNAL, Map.of());
    }

    /**
     * The current span of this thread as W3C Trace Context fields, to pass to another thread or
     * process; empty when there is none (or nothing is traced).
     */
    default Map<String, String> current() {
        return Map.of();
    }

    /** The cache counted {@code counts} (of {@code tool}, null for runs of code) in this process. */
    default void counted(String tool, Map<Counter, Long> counts) {
    }
}
