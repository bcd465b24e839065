package dev.execache.store.memory.archfixture;

import dev.execache.cli.Main;
import dev.execache.core.archfixture.CoreUsingPicocli;

/** Breaks the rules on purpose: an adapter using the CLI, and the other half of a package cycle. */
public final class AdapterUsingTheCli {
    public Class<?> cli = Main.class;
    public CoreUsingPicocli core;
}
