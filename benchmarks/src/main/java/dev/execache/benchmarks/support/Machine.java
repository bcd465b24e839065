package dev.execache.benchmarks.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** What the figures were measured on. */
public final class Machine {

    private Machine() {
    }

    public static String describe(String denoVersion) {
        return String.format(Locale.ROOT, "%d cores (%s), %s memory, %s %s %s; Java %s (%s); %s",
                Runtime.getRuntime().availableProcessors(),
                procLine(Path.of("/proc/cpuinfo"), "model name").orElse("cpu model unknown"),
                procLine(Path.of("/proc/meminfo"), "MemTotal")
                        .map(kb -> String.format(Locale.ROOT, "%.1f GiB",
                                Long.parseLong(kb.replaceAll("[^0-9]", "")) / 1024.0 / 1024.0))
                        .orElse("unknown"),
                System.getProperty("os.name"), System.getProperty("os.version"), System.getProperty("os.arch"),
                System.getProperty("java.runtime.version"), System.getProperty("java.vm.name"),
                denoVersion);
    }

    /** The 1, 5 and 15 minute load averages, or "unknown" off Linux. */
    public static String loadAverage() {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return fields[0] + ", " + fields[1] + ", " + fields[2];
        } catch (IOException e) {
            return "unknown";
        }
    }

    /**
     * Pins this process (its threads now and those it starts later, child processes too) to the
     * first CPU it may use, with {@code taskset}; returns the CPU list to give back with
     * {@link #unpin}, or empty when it cannot (no taskset, not Linux).
     */
    public static Optional<String> pinToOneCpu() {
        String pid = Long.toString(ProcessHandle.current().pid());
        Optional<String> allowed = taskset("-c", "-p", pid)
                .map(out -> out.substring(out.lastIndexOf(':') + 1).strip());
        if (allowed.isEmpty()) {
            return Optional.empty();
        }
        String first = allowed.get().split("[,-]")[0];
        return taskset("-a", "-c", "-p", first, pid).map(out -> allowed.get());
    }

    /** Gives this process and the processes it started back the CPUs {@link #pinToOneCpu} took from them. */
    public static void unpin(String cpus) {
        taskset("-a", "-c", "-p", cpus, Long.toString(ProcessHandle.current().pid()));
        ProcessHandle.current().descendants()
                .forEach(process -> taskset("-a", "-c", "-p", cpus, Long.toString(process.pid())));
    }

    private static Optional<String> taskset(String... args) {
        List<String> command = new ArrayList<>(List.of("taskset"));
        command.addAll(List.of(args));
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return process.waitFor() == 0 ? Optional.of(out.strip()) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    private static Optional<String> procLine(Path file, String name) {
        try {
            return Files.readAllLines(file).stream()
                    .filter(line -> line.startsWith(name))
                    .map(line -> line.substring(line.indexOf(':') + 1).strip())
                    .findFirst();
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
