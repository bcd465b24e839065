package dev.execache.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.CacheEntry;
import dev.execache.core.CacheStats;
import dev.execache.core.ExecutionRequest;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "inspect", mixinStandardHelpOptions = true,
        description = {"Shows one cached result without counting a hit: age, TTL left, hits, the tools it depends on.",
            "Name it by KEY, or by --file (with the --context and --tool it runs with) to compute the key."})
final class InspectCommand implements Callable<Integer> {
    private final SessionFactory sessions;
    private final Environment environment;
    private final Clock clock;

    @Spec
    CommandSpec spec;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Target target;

    static final class Target {
        @Parameters(paramLabel = "KEY", description = "A cache key, as `run --json` prints it.")
        String key;

        @Option(names = "--file", paramLabel = "FILE", description = "Code whose entry to show.")
        Path file;
    }

    @Option(names = "--context", paramLabel = "JSON|@FILE", description = "With --file: the context. Default: {}")
    String context;

    @Option(names = "--json", description = "Print the entry as one JSON object. Default: false.")
    boolean json;

    @Mixin
    RunOptions options = new RunOptions();

    @Inject
    InspectCommand(SessionFactory sessions, Environment environment, Clock clock) {
        this.sessions = sessions;
        this.environment = environment;
        this.clock = clock;
    }

    @Override
    public Integer call() {
        try (Session session = sessions.openForStoreManagement(options.flags())) {
            Settings settings = session.settings();
            String key = target.key != null ? target.key : keyOf(session, settings);
            Optional<CacheEntry> entry = session.executor().inspect(key);
            PrintWriter out = spec.commandLine().getOut();
            if (entry.isEmpty()) {
                if (json) {
                    ObjectNode node = Output.JSON.createObjectNode();
                    node.put("key", key);
                    node.put("cached", false);
                    out.println(Output.write(node));
                } else {
                    out.println("not cached: " + key);
                }
                out.flush();
                return ExitCode.OK;
            }
            print(out, entry.get(), clock.instant());
            out.flush();
            return ExitCode.OK;
        }
    }

    private String keyOf(Session session, Settings settings) {
        String code = Inputs.readFile(environment.workingDir(), target.file.toString(), "--file");
        Object contextValue = Inputs.context(context, environment.workingDir());
        try {
            return session.executor().keyFor(new ExecutionRequest(code, contextValue,
                    new LinkedHashSet<>(Settings.declaredTools(options.flags())), settings.limits()));
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage(), e);
        }
    }

    private void print(PrintWriter out, CacheEntry entry, Instant now) {
        Duration age = Duration.between(entry.createdAt(), now);
        Duration ttlLeft = Duration.between(now, entry.expiresAt());
        if (json) {
            ObjectNode node = Output.JSON.createObjectNode();
            node.put("key", entry.key());
            node.put("cached", true);
            node.put("ageMs", age.toMillis());
            node.put("ttlLeftMs", ttlLeft.toMillis());
            node.put("hits", entry.hits());
            node.put("executionTimeMs", Output.millis(entry.executionTime()));
            node.set("tools", Output.JSON.valueToTree(entry.toolVersions()));
            node.set("result", Output.rawJson(entry.value()));
            out.println(Output.write(node));
            return;
        }
        out.printf(Locale.ROOT, "%-15s %s%n", "key", entry.key());
        out.printf(Locale.ROOT, "%-15s %s (stored %s)%n", "age", CacheStats.human(age), entry.createdAt());
        out.printf(Locale.ROOT, "%-15s %s%n", "ttl left", CacheStats.human(ttlLeft));
        out.printf(Locale.ROOT, "%-15s %d%n", "hits", entry.hits());
        out.printf(Locale.ROOT, "%-15s %s%n", "ran in", CacheStats.human(entry.executionTime()));
        out.printf(Locale.ROOT, "%-15s %s%n", "tools", entry.toolVersions().isEmpty() ? "none" : entry.toolVersions());
        out.printf(Locale.ROOT, "%-15s %d bytes%n", "result", entry.value().length());
    }

}
