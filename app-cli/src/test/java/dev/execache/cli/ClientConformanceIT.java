package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The official MCP conformance suite's client scenarios ({@code @modelcontextprotocol/conformance}, pinned in
 * app-cli/src/test/node/package.json) with execache as the client: for each scenario the suite starts its
 * server and runs conformance-agent.mjs, an agent on stdio (the official TypeScript SDK client) driving
 * {@code execache serve} with that server as a url server. Every client scenario of both eras runs (as the suite lists
 * them for each), the {@code auth/*} ones among them (the agent's person signs in when execache asks, a headless
 * browser following the suite's authorization server back to execache), those of the 2025-03-26 revision, and the
 * client-credentials extension; the other extensions are not run: they are ways of authenticating execache does not
 * offer (docs/gateway.md names them). Each scenario's passed/total is printed; one that does not pass fails the test.
 * A few scenarios run at once: most of a scenario's time is spent waiting (a JVM starting, a sign-in's round trips).
 */
class ClientConformanceIT {
    /** Scenarios of the suite's extensions that are run, besides those of the two eras. */
    private static final List<String> EXTENSIONS = List.of("auth/client-credentials-basic");
    /** The revisions whose client scenarios the suite lists; 2025-03-26's are its authorization's, before metadata. */
    private static final List<String> ERAS = List.of("2025-11-25", "2026-07-28", "2025-03-26");
    /** Scenarios run at once. */
    private static final int AT_ONCE = 3;
    private static final Pattern LISTED = Pattern.compile("^\\s+- (\\S+) \\[");
    private static final Duration SCENARIO_LIMIT = Duration.ofMinutes(2);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;

    @Test
    void everyClientScenarioOfBothErasPassesWithExecacheAsTheClient() throws Exception {
        Path conformance = installed();
        Map<String, List<String>> runs = new LinkedHashMap<>();
        for (String era : ERAS) {
            runs.put(era, listed(conformance, era));
        }
        runs.put("extension", EXTENSIONS);
        assertThat(runs.get("2025-11-25")).as("the suite's client scenarios of 2025-11-25")
                .contains("initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry",
                        "auth/metadata-default", "auth/basic-cimd", "auth/scope-step-up", "auth/pre-registration");
        assertThat(runs.get("2026-07-28")).as("the suite's client scenarios of 2026-07-28")
                .contains("tools_call", "request-metadata", "http-standard-headers", "http-custom-headers",
                        "http-invalid-tool-headers", "auth/metadata-default", "auth/scope-step-up",
                        "auth/authorization-server-migration", "auth/iss-wrong-issuer");
        assertThat(runs.get("2025-03-26")).as("the suite's client scenarios of 2025-03-26")
                .contains("auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback");

        ExecutorService pool = Executors.newFixedThreadPool(AT_ONCE);
        Map<String, Future<Outcome>> outcomes = new LinkedHashMap<>();
        try {
            for (Map.Entry<String, List<String>> era : runs.entrySet()) {
                for (String scenario : era.getValue()) {
                    outcomes.put(era.getKey() + " " + scenario, pool.submit(() -> run(conformance, era.getKey(), scenario)));
                }
            }
            List<String> failing = new ArrayList<>();
            int passed = 0;
            for (Map.Entry<String, Future<Outcome>> run : outcomes.entrySet()) {
                Outcome outcome = run.getValue().get();
                passed += outcome.passed() ? 1 : 0;
                System.out.println("conformance client " + run.getKey() + ": " + outcome);
                if (!outcome.passed()) {
                    failing.add(run.getKey() + ": " + outcome.failures() + "\n" + outcome.log());
                }
            }
            System.out.printf("conformance client scenarios: %d of %d pass with execache as the client%n", passed,
                    outcomes.size());
            assertThat(failing).as("client scenarios that fail with execache as the client").isEmpty();
        } finally {
            pool.shutdownNow();
        }
    }

    /** What one scenario's checks came to, and the client's output. */
    record Outcome(int succeeded, int failed, int warned, List<String> failures, String log) {
        /** No check failed or warned, and one at least succeeded. */
        boolean passed() {
            return failed == 0 && warned == 0 && succeeded > 0;
        }

        @Override
        public String toString() {
            return succeeded + "/" + (succeeded + failed) + (warned == 0 ? "" : ", " + warned + " warnings");
        }
    }

    private static Outcome run(Path conformance, String era, String scenario) throws Exception {
        Path results = Files.createTempDirectory(dir, "results");
        String agent = node(conformance) + " " + conformance.resolve("conformance-agent.mjs") + " " + ServeProcess.java()
                + " " + String.join(" ", ServeArchive.options()) + " " + ServeProcess.jar();
        List<String> command = new ArrayList<>(List.of(node(conformance), conformance.resolve(
                "node_modules/@modelcontextprotocol/conformance/dist/index.js").toString(), "client", "--command", agent,
                "--scenario", scenario, "--output-dir", results.toString()));
        if (!era.equals("extension")) {
            command.addAll(List.of("--spec-version", era));
        }
        Path log = results.resolve("suite.log");
        Process suite = new ProcessBuilder(command).directory(conformance.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        if (!suite.waitFor(SCENARIO_LIMIT.toMillis(), TimeUnit.MILLISECONDS)) {
            suite.descendants().forEach(ProcessHandle::destroyForcibly);
            suite.destroyForcibly();
            throw new AssertionError("client scenario " + scenario + " did not end within " + SCENARIO_LIMIT);
        }
        Path checks;
        try (Stream<Path> files = Files.walk(results)) {
            checks = files.filter(file -> file.getFileName().toString().equals("checks.json")).findFirst().orElse(null);
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        assertThat(checks).as("the checks of client scenario %s:\n%s", scenario, output).isNotNull();
        String clientErr = checks.resolveSibling("stderr.txt").toFile().isFile()
                ? Files.readString(checks.resolveSibling("stderr.txt"), StandardCharsets.UTF_8) : "";
        return outcome(JSON.readTree(checks.toFile()), output + "\nclient's stderr:\n" + clientErr);
    }

    private static Outcome outcome(JsonNode checks, String log) {
        int succeeded = 0;
        int failed = 0;
        int warned = 0;
        List<String> failures = new ArrayList<>();
        for (JsonNode check : checks) {
            switch (check.path("status").asText()) {
                case "SUCCESS" -> succeeded++;
                case "FAILURE", "WARNING" -> {
                    if (check.path("status").asText().equals("FAILURE")) {
                        failed++;
                    } else {
                        warned++;
                    }
                    failures.add(check.path("id").asText() + ": " + check.path("errorMessage").asText(
                            check.path("description").asText()));
                }
                default -> {
                    // INFO and SKIPPED say nothing about passing
                }
            }
        }
        return new Outcome(succeeded, failed, warned, List.copyOf(failures), log);
    }

    /** The client scenarios the suite lists for an era. */
    private static List<String> listed(Path conformance, String era) throws IOException, InterruptedException {
        Process list = new ProcessBuilder(node(conformance), conformance.resolve(
                "node_modules/@modelcontextprotocol/conformance/dist/index.js").toString(), "list", "--client",
                "--spec-version", era).directory(conformance.toFile()).redirectErrorStream(true).start();
        String output = new String(list.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(list.waitFor(1, TimeUnit.MINUTES)).isTrue();
        List<String> scenarios = new ArrayList<>();
        for (String line : output.split("\n")) {
            Matcher listed = LISTED.matcher(line);
            if (listed.find()) {
                scenarios.add(listed.group(1));
            }
        }
        return scenarios;
    }

    private static String node(Path conformance) {
        return conformance.resolve("node_modules/node/bin/node").toString();
    }

    /** The suite and the agent, installed by the build; missing is a failure, never a skip. */
    private static Path installed() {
        Path folder = TypeScriptClient.nodeModules().getParent();
        if (!Files.isRegularFile(folder.resolve("conformance-agent.mjs"))
                || !Files.isDirectory(folder.resolve("node_modules/@modelcontextprotocol/conformance"))) {
            throw new IllegalStateException("the build installs the conformance suite and its agent in " + folder
                    + " (target/node); they are not there");
        }
        return folder;
    }
}
