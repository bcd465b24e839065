package dev.execache.sandbox;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every Deno process this JVM started and has not yet ended, so that a JVM that exits, even
 * on SIGTERM, leaves none behind. (A pooled runner whose JVM died without running the hook
 * reads the end of its stdin and exits by itself.)
 */
final class LiveProcesses {
    private static final Set<Process> PROCESSES = ConcurrentHashMap.newKeySet();
    private static final Thread HOOK = new Thread(LiveProcesses::killAll, "execache-deno-shutdown");
    /** Set once the JVM exits: a process started after that (a pool refill) is ended at once. */
    private static volatile boolean exiting;

    static {
        try {
            Runtime.getRuntime().addShutdownHook(HOOK);
        } catch (IllegalStateException e) {
            // the first Deno process starts while the JVM exits: it is ended at once
            exiting = true;
        }
    }

    private LiveProcesses() {
    }

    static void add(Process process) {
        PROCESSES.add(process);
        if (exiting) {
            kill(process);
        }
    }

    /** Whether the JVM is exiting, so that a run that failed was stopped by the exit, not by its code. */
    static boolean exiting() {
        return exiting;
    }

    static void remove(Process process) {
        PROCESSES.remove(process);
    }

    private static void killAll() {
        exiting = true;
        PROCESSES.forEach(LiveProcesses::kill);
    }

    private static void kill(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }
}
