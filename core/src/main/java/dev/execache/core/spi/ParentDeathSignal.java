package dev.execache.core.spi;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * How an adapter starts a child process that must not outlive execache, whatever ends execache (SIGKILL included):
 * on Linux util-linux's {@code setpriv --pdeathsig KILL} sets PR_SET_PDEATHSIG and then execs the command, so the pid
 * stays the child's. The signal follows the thread that started the child, not the JVM, so that thread must outlive
 * the child.
 *
 * <p>It is here, in the SPI, because two adapters start such children (the sandbox its Deno runners, the MCP tools
 * their command servers) and adapters do not depend on each other; it needs nothing but the JDK.
 */
public final class ParentDeathSignal {
    private static final List<String> COMMAND_PREFIX = find();

    private ParentDeathSignal() {
    }

    /**
     * What to put before a command so that the child is killed when the thread that started it ends: setpriv and its
     * arguments, or empty where there is no setpriv (not Linux, a minimal image).
     */
    public static List<String> commandPrefix() {
        return COMMAND_PREFIX;
    }

    private static List<String> find() {
        if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
            return List.of();
        }
        for (String candidate : List.of("/usr/bin/setpriv", "/bin/setpriv")) {
            if (Files.isExecutable(Path.of(candidate))) {
                return List.of(candidate, "--pdeathsig", "KILL", "--");
            }
        }
        return List.of();
    }
}
