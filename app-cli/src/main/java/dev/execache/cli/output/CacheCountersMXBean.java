package dev.execache.cli.output;

import java.util.Map;

/**
 * The counters of one store as JMX attributes, registered by long-running processes
 * ({@code execache serve}, the resident server) as {@code dev.execache:type=Cache,store=...,location=...}.
 * Public because JMX reads only public MXBean interfaces.
 */
public interface CacheCountersMXBean {
    String getStore();

    String getLocation();

    int getMaxEntries();

    long getDefaultTtlSeconds();

    /** ISO 8601, empty when unknown. */
    String getCountingSince();

    long getHits();

    long getMisses();

    long getShared();

    long getFailed();

    long getBypassed();

    long getUncacheable();

    Map<String, Long> getUncacheableByReason();

    double getHitRate();

    long getSavedMillis();

    long getEvictions();

    long getExpirations();

    long getInvalidations();

    long getStoreErrors();

    long getDamaged();

    long getEntries();

    long getEstimatedBytes();

    /** Bytes code mode kept out of agents' contexts (tool answers consumed minus results returned). */
    long getKeptOutBytes();
}
