package dev.execache.cli;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import java.time.Clock;

/** What every command shares: the process's environment and the clock. */
final class BaseModule extends AbstractModule {
    private final Environment environment;
    private final Console console;

    BaseModule(Environment environment, Console console) {
        this.environment = environment;
        this.console = console;
    }

    @Provides
    Console console() {
        return console;
    }

    @Provides
    Environment environment() {
        return environment;
    }

    @Provides
    Clock clock() {
        return Clock.systemUTC();
    }
}
