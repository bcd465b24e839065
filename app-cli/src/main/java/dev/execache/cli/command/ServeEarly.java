package dev.execache.cli.command;

import dev.execache.cli.session.GatewayCatalog;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Settings;
import java.nio.file.Path;

/**
 * serve's servers started before serve has read its command line in full, for the command lines hosts start it with
 * ({@code serve}, and {@code serve --config FILE}, which setup writes): the servers' own start, a Node server's
 * hundreds of milliseconds, then runs beside serve's, instead of after the JVM's start, picocli's and Guice's. serve
 * takes them when it resolves the same servers (see {@link GatewayCatalog#serveEarly}).
 */
public final class ServeEarly {
    private static volatile Runnable logsHeld;

    private ServeEarly() {
    }

    /**
     * Starts serve's servers early when {@code args} are a command line of that form, and returns whether it did.
     *
     * @param configureLogging configures logging (once for the process), done before the servers start, which log
     * @param releaseLogs lets out what other threads logged since, once serve has said which config file it read
     *     (its first line); held until then
     */
    public static boolean begin(String[] args, Environment environment, Runnable configureLogging,
            Runnable releaseLogs) {
        Path config;
        if (args.length == 1 && args[0].equals("serve")) {
            config = null;
        } else if (args.length == 3 && args[0].equals("serve") && args[1].equals("--config") && !args[2].startsWith("-")) {
            config = Path.of(args[2]);
        } else if (args.length == 2 && args[0].equals("serve") && args[1].startsWith("--config=")
                && args[1].length() > "--config=".length()) {
            config = Path.of(args[1].substring("--config=".length()));
        } else {
            return false;
        }
        logsHeld = releaseLogs;
        GatewayCatalog.serveEarly(() -> {
            Settings settings = ServeCommand.settingsOfEarlyStart(config, environment);
            configureLogging.run();
            return settings;
        }, environment);
        // meanwhile, here: the JVM's first logger looks for a logging backend on the class path, opening serve's jar
        // (about 25 ms), which the servers' thread then finds done
        System.getLogger(ServeEarly.class.getName());
        return true;
    }

    /** Lets out the lines held since {@link #begin}; see there. */
    static void releaseLogs() {
        Runnable release = logsHeld;
        logsHeld = null;
        if (release != null) {
            release.run();
        }
    }
}
