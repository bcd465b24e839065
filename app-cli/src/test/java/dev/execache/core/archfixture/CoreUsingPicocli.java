package dev.execache.core.archfixture;

import dev.execache.store.memory.archfixture.AdapterUsingTheCli;

/** Breaks the rules on purpose: core code using picocli, and part of a package cycle. */
public final class CoreUsingPicocli {
    public picocli.CommandLine commandLine;
    public AdapterUsingTheCli adapter;
}
