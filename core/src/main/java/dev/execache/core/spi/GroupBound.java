package dev.execache.core.spi;

/**
 * A bound on a group of entries inside a store, kept by the store itself: after a put, the
 * group holds at most {@code maxEntries}, its least recently used evicted first. A tool rule
 * is such a group, so its bound stays exact after clear and invalidation.
 *
 * @param group the group's name
 * @param maxEntries how many entries of the group the store keeps
 */
public record GroupBound(String group, int maxEntries) {
    public GroupBound {
        if (group == null || group.isEmpty()) {
            throw new IllegalArgumentException("group must not be empty");
        }
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be at least 1 (group " + group + "): " + maxEntries);
        }
    }
}
