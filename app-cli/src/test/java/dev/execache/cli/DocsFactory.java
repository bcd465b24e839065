package dev.execache.cli;

import com.google.inject.Guice;
import dev.execache.cli.command.GuiceFactory;
import dev.execache.cli.output.Console;
import dev.execache.cli.session.BaseModule;
import dev.execache.cli.settings.Environment;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine;

/** Builds the commands for picocli's man page generator (run by the build), as Main wires them. */
public final class DocsFactory implements CommandLine.IFactory {
    private final CommandLine.IFactory factory = new GuiceFactory(Guice.createInjector(
            new BaseModule(new Environment(Map.of(), Path.of("."), InputStream.nullInputStream()), new Console())));

    @Override
    public <K> K create(Class<K> cls) throws Exception {
        return factory.create(cls);
    }
}
