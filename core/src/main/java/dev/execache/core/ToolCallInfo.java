package dev.execache.core;

import java.time.Duration;
import java.util.Map;

/**
 * What the cache holds for one tool call.
 *
 * @param key its cache key
 * @param age time since it was stored
 * @param ttlLeft time until it expires
 * @param hits how many times it was returned
 * @param toolVersions the versions it was made with
 */
public record ToolCallInfo(String key, Duration age, Duration ttlLeft, long hits, Map<String, String> toolVersions) {
}
