package dev.execache.core.spi;

/** A public type in the SPI that its list does not name: the SPI rule must catch it. */
public final class PublicHelperOfTheSpi {
    private PublicHelperOfTheSpi() {
    }
}
