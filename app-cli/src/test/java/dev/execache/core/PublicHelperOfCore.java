package dev.execache.core;

/** A public type in core that the library API does not name: the API rule must catch it. */
public final class PublicHelperOfCore {
    private PublicHelperOfCore() {
    }
}
