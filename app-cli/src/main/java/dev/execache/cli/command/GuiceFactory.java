package dev.execache.cli.command;

import com.google.inject.ConfigurationException;
import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.Module;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import picocli.CommandLine;

/** Lets Guice build picocli's commands; anything Guice cannot build, picocli builds itself. */
public final class GuiceFactory implements CommandLine.IFactory {
    private final CompletableFuture<Injector> injector;

    public GuiceFactory(Injector injector) {
        this.injector = CompletableFuture.completedFuture(injector);
    }

    private GuiceFactory(CompletableFuture<Injector> injector) {
        this.injector = injector;
    }

    /**
     * A factory whose injector is built on a thread of its own while picocli reads the commands' annotations:
     * each takes tens of milliseconds of a start, on classes the other does not load.
     */
    public static GuiceFactory buildingBeside(Module module) {
        CompletableFuture<Injector> injector = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                injector.complete(Guice.createInjector(module));
            } catch (Throwable e) {
                injector.completeExceptionally(e);
            }
        }, "execache-injector");
        thread.setDaemon(true);
        thread.start();
        return new GuiceFactory(injector);
    }

    @Override
    public <K> K create(Class<K> type) throws Exception {
        Injector built;
        try {
            built = injector.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw e;
        }
        try {
            return built.getInstance(type);
        } catch (ConfigurationException e) {
            return CommandLine.defaultFactory().create(type);
        }
    }
}
