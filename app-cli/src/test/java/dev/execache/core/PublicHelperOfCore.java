package dev.execache.core;

/** A public type in core that the library surface does not name: the surface rule must catch it. */
public final class PublicHelperOfCore {
    private PublicHelperOfCore() {
    }
}
