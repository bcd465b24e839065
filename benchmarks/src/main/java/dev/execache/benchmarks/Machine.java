package dev.execache.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/** What the figures were measured on. */
final class Machine {

    private Machine() {
    }

    static String describe(String denoVersion) {
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
    static String loadAverage() {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return fields[0] + ", " + fields[1] + ", " + fields[2];
        } catch (IOException e) {
            return "unknown";
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
