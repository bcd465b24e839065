package dev.execache.cli.session;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import dev.execache.cli.output.Console;
import dev.execache.cli.settings.Environment;
import java.time.Clock;

/** What every command shares: the process's environment and the clock. */
public final class BaseModule extends AbstractModule {
    private final Environment environment;
    private final Console console;
    private final Resources resources;

    public BaseModule(Environment environment, Console console) {
        this(environment, console, Resources.PER_COMMAND);
    }

    public BaseModule(Environment environment, Console console, Resources resources) {
        this.environment = environment;
        this.console = console;
        this.resources = resources;
    }

    @Provides
    Resources resources() {
        return resources;
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
