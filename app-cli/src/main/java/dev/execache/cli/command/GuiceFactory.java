package dev.execache.cli.command;

import com.google.inject.ConfigurationException;
import com.google.inject.Injector;
import picocli.CommandLine;

/** Lets Guice build picocli's commands; anything Guice cannot build, picocli builds itself. */
public final class GuiceFactory implements CommandLine.IFactory {
    private final Injector injector;

    public GuiceFactory(Injector injector) {
        this.injector = injector;
    }

    @Override
    public <K> K create(Class<K> type) throws Exception {
        try {
            return injector.getInstance(type);
        } catch (ConfigurationException e) {
            return CommandLine.defaultFactory().create(type);
        }
    }
}
