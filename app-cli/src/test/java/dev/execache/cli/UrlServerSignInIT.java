package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.cli.command.ExitCode;
import dev.execache.cli.session.GatewayCatalog;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Settings;
import dev.execache.gateway.TestDeno;
import dev.execache.mcp.server.RawHttp;
import dev.execache.tools.mcp.McpToolCatalog;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A person signs in to a url server that acts as them: oidc-provider (pinned) is the authorization
 * server, person-server.mjs (the official TypeScript SDK, pinned) the url server, which takes only
 * tokens issued for its own URL and answers who they name; a headless browser signs in at the
 * provider's development pages. {@code execache login} follows the server's 401 to the provider,
 * registers itself, and runs the authorization code flow with PKCE; through {@code serve} on stdio the
 * agent is asked to have its person sign in (a URL-mode elicitation) and the call goes on. Through one
 * {@code serve --http} with OAuth, each agent's person reaches the server as themselves: their token is
 * exchanged at the provider (RFC 8693, its grant registered in oauth-server.mjs) for one meant for the server.
 */
class UrlServerSignInIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern AUTHORIZATION_URL = Pattern.compile("(http://127\\.0\\.0\\.1:\\d+/auth\\?\\S+)");
    private static OidcProvider provider;
    private static Process personServer;
    private static String serverUrl;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() throws Exception {
        provider = OidcProvider.start();
        Path modules = TypeScriptClient.nodeModules();
        personServer = new ProcessBuilder(modules.resolve(".bin/node").toString(),
                modules.getParent().resolve("person-server.mjs").toString(), provider.issuer(), "execache:read")
                .directory(modules.getParent().toFile()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String line = CompletableFuture.supplyAsync(() -> {
            try {
                return new BufferedReader(new InputStreamReader(personServer.getInputStream(), StandardCharsets.UTF_8))
                        .readLine();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }).get(1, TimeUnit.MINUTES);
        serverUrl = JSON.readTree(line).get("url").textValue();
    }

    @AfterAll
    static void stop() throws Exception {
        personServer.destroy();
        personServer.waitFor(30, TimeUnit.SECONDS);
        provider.close();
    }

    @BeforeEach
    void config() throws IOException {
        Files.writeString(dir.resolve("execache.yaml"), """
                servers:
                  person:
                    url: "%s"
                """.formatted(serverUrl));
        Files.writeString(dir.resolve("whoami.js"), "return await tools.person.whoami({})");
    }

    /** One command's printed output and exit code. */
    private record Ran(int exitCode, String out, String err) {
        String printed() {
            return out + err;
        }
    }

    private Map<String, String> environment(String person) throws IOException {
        Map<String, String> environment = new HashMap<>();
        environment.put("XDG_STATE_HOME", dir.resolve(person).resolve("state").toString());
        environment.put("XDG_CACHE_HOME", dir.resolve("cache").toString());
        environment.put("EXECACHE_DENO", TestDeno.executable().toString());
        return environment;
    }

    private Ran run(String person, String... args) throws IOException {
        return run(environment(person), args);
    }

    private Ran run(Map<String, String> environment, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, environment, dir, new ByteArrayInputStream(new byte[0]),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Ran(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** {@code execache login person} as {@code person}, who signs in at the provider as {@code person} too. */
    private Ran login(String person) throws Exception {
        Map<String, String> environment = environment(person);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        CompletableFuture<Integer> login = CompletableFuture.supplyAsync(() -> Main.run(new String[] {"login", "person"},
                environment, dir, new ByteArrayInputStream(new byte[0]), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8)));
        await().atMost(Duration.ofMinutes(1)).until(() -> login.isDone()
                || AUTHORIZATION_URL.matcher(out.toString(StandardCharsets.UTF_8)).find());
        Matcher url = AUTHORIZATION_URL.matcher(out.toString(StandardCharsets.UTF_8));
        assertThat(url.find()).as(out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8)).isTrue();
        JsonNode browser = provider.signIn(url.group(1), person);
        assertThat(browser.get("callback").intValue()).as(browser.toString()).isEqualTo(200);
        int code = login.get(1, TimeUnit.MINUTES);
        return new Ran(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private Path signInFile(String person) throws IOException {
        try (Stream<Path> files = Files.list(dir.resolve(person).resolve("state/execache/sign-ins"))) {
            return files.filter(file -> file.toString().endsWith(".json")).findFirst().orElseThrow();
        }
    }

    private JsonNode whoami(String person) throws IOException {
        Ran ran = run(person, "run", "whoami.js", "--json");
        assertThat(ran.exitCode()).as(ran.printed()).isEqualTo(ExitCode.OK);
        return JSON.readTree(ran.out()).get("result");
    }

    @Test
    void aPersonSignsInOnceAndTheServerAnswersThemWithTheirTokenKeptOwnerOnly() throws Exception {
        Ran login = login("alice");

        assertThat(login.exitCode()).as(login.printed()).isEqualTo(ExitCode.OK);
        assertThat(login.out()).contains("To sign in to server person, open this URL in a browser:")
                .contains("Signed in to server person as alice (at " + provider.issuer() + ")");
        assertThat(login.out()).contains("code_challenge_method=S256").contains("response_type=code")
                .contains("resource=" + java.net.URLEncoder.encode(serverUrl, StandardCharsets.UTF_8))
                .contains("scope=execache%3Aread");
        Path file = signInFile("alice");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file.getParent()))).isEqualTo("rwx------");
        JsonNode kept = JSON.readTree(Files.readString(file));
        assertThat(kept.path("refresh_token").isTextual()).as("the provider gave a refresh token").isTrue();

        JsonNode answer = whoami("alice");
        Ran tools = run("alice", "tools");
        Ran doctor = run("alice", "doctor", "--store", "memory");

        assertThat(answer.get("sub").asText()).isEqualTo("alice");
        assertThat(answer.get("aud").asText()).isEqualTo(serverUrl);
        assertThat(tools.out()).containsPattern("person\\s+signed in as alice at " + Pattern.quote(provider.issuer()) + " since ");
        assertThat(doctor.out()).contains("sign-in server person: signed in as alice at " + provider.issuer());
        String secrets = kept.get("access_token").asText() + "|" + kept.get("refresh_token").asText();
        for (String printed : List.of(login.printed(), tools.printed(), doctor.printed())) {
            assertThat(printed).doesNotContain(kept.get("access_token").asText()).doesNotContain(kept.get("refresh_token").asText());
        }
        try (Stream<Path> files = Files.walk(dir.resolve("cache"))) {
            for (Path cached : files.filter(Files::isRegularFile).filter(path -> !path.toString().contains("deno")).toList()) {
                String bytes = new String(Files.readAllBytes(cached), StandardCharsets.ISO_8859_1);
                for (String secret : secrets.split("\\|")) {
                    assertThat(bytes).as(cached.toString()).doesNotContain(secret);
                }
            }
        }
    }

    @Test
    void anAccessTokenAboutToExpireIsRenewedWithTheRefreshToken() throws Exception {
        assertThat(login("carol").exitCode()).isEqualTo(ExitCode.OK);
        Path file = signInFile("carol");
        ObjectNode kept = (ObjectNode) JSON.readTree(Files.readString(file));
        kept.put("expires_at", 0);
        Files.writeString(file, kept.toString());

        JsonNode answer = whoami("carol");

        JsonNode renewed = JSON.readTree(Files.readString(file));
        assertThat(answer.get("sub").asText()).isEqualTo("carol");
        assertThat(renewed.get("access_token").asText()).isNotEqualTo(kept.get("access_token").asText());
        assertThat(renewed.get("expires_at").asLong()).isGreaterThan(0);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
    }

    @Test
    void aRevokedSignInIsAToolErrorSayingHowToSignInAgain() throws Exception {
        assertThat(login("dave").exitCode()).isEqualTo(ExitCode.OK);
        Path file = signInFile("dave");
        ObjectNode kept = (ObjectNode) JSON.readTree(Files.readString(file));
        provider.revoke(kept.get("refresh_token").asText(), kept.get("client_id").asText());
        kept.put("expires_at", 0);
        Files.writeString(file, kept.toString());

        Ran tools = run("dave", "tools");

        assertThat(tools.exitCode()).isEqualTo(ExitCode.INFRASTRUCTURE);
        assertThat(tools.err()).contains("server person: your sign-in has expired or was revoked;"
                + " sign in again with 'execache login person'");
        assertThat(tools.printed()).doesNotContain(kept.get("refresh_token").asText());
    }

    @Test
    void logoutForgetsTheSignInAndACallThenSaysHowToSignIn() throws Exception {
        assertThat(login("erin").exitCode()).isEqualTo(ExitCode.OK);
        Path file = signInFile("erin");

        Ran logout = run("erin", "logout", "person");

        assertThat(logout.exitCode()).isEqualTo(ExitCode.OK);
        assertThat(logout.out()).contains("Signed out of server person.");
        assertThat(file).doesNotExist();
        assertThat(run("erin", "tools").out()).contains("person  not signed in (if it asks for a sign-in: execache login person)");
        Environment command = new Environment(environment("erin"), dir, new ByteArrayInputStream(new byte[0]));
        Settings settings = Settings.resolve(new Settings.Flags(null, "memory", null, null, false, null, null, null, null,
                null, List.of(), List.of(), null), command.variables(), command.workingDir());
        try (McpToolCatalog serving = GatewayCatalog.start(settings, command)) {
            String text = JSON.readTree(serving.call("person__whoami", Map.of()).json()).at("/content/0/text").textValue();

            assertThat(text).contains("server person asks you to sign in: run 'execache login person'");
        }
    }

    @Test
    void throughServeOnStdioTheAgentIsAskedToSignInAndTheCallGoesOn() throws Exception {
        JsonNode out = signInAgent("henry", Map.of());

        assertThat(out.has("thrown")).as(out.path("thrown").asText()).isFalse();
        assertThat(out.at("/asked/0/mode").asText()).isEqualTo("url");
        assertThat(out.at("/asked/0/message").asText()).contains("Server person asks you to sign in");
        assertThat(out.at("/opened/origin").asText()).isEqualTo(provider.issuer());
        assertThat(out.at("/opened/codeChallengeMethod").asText()).isEqualTo("S256");
        assertThat(out.at("/opened/resource").asText()).isEqualTo(serverUrl);
        assertThat(out.at("/callback").asInt()).as(out.toString()).isEqualTo(200);
        assertThat(out.at("/isError").booleanValue()).as(out.toString()).isFalse();
        assertThat(JSON.readTree(out.at("/answer").asText()).get("sub").asText()).isEqualTo("henry");
        assertThat(out.at("/askedAgain").asInt()).as("signed in once, not again for the next call").isEqualTo(1);
        assertThat(Files.readString(signInFile("henry"))).contains("\"account\":\"henry\"");
    }

    /**
     * The person signs in while execache is still reaching the server without their sign-in (a slow server holds the
     * attempt): the call waits for the attempt made with the sign-in, and the person is asked once.
     */
    @Test
    void signingInWhileTheServerIsStillBeingReachedAsksOnce() throws Exception {
        holdRefusals(3);
        JsonNode out;
        try {
            out = signInAgent("iris", Map.of("HELD_URL", serverUrl.replace("/mcp", "/test/held")));
        } finally {
            holdRefusals(0);
        }

        assertThat(out.has("thrown")).as(out.path("thrown").asText()).isFalse();
        assertThat(out.at("/isError").booleanValue()).as(out.toString()).isFalse();
        assertThat(JSON.readTree(out.at("/answer").asText()).get("sub").asText()).isEqualTo("iris");
        assertThat(out.at("/askedAgain").asInt()).as("asked to sign in once: " + out.get("asked")).isEqualTo(1);
    }

    /** sign-in-agent.mjs as {@code login}'s agent, calling person__whoami through serve on stdio; what it printed. */
    private JsonNode signInAgent(String login, Map<String, String> extra) throws Exception {
        List<String> arguments = new java.util.ArrayList<>(List.of(login, "person__whoami", ServeProcess.java()));
        arguments.addAll(ServeProcess.command("sign-in-agent", List.of("--store", "memory", "--config",
                dir.resolve("execache.yaml").toString())));
        Map<String, String> environment = environment(login);
        environment.put("EXECACHE_WARM_POOL", "0");
        environment.putAll(extra);
        return TypeScriptClient.runScript("sign-in-agent.mjs", arguments, environment);
    }

    /** Has person-server.mjs hold execache's attempts without a token for this many seconds (0: not at all). */
    private static void holdRefusals(int seconds) throws Exception {
        RawHttp.Answer held = RawHttp.send(java.net.URI.create(serverUrl).getPort(), "POST", "/test/hold",
                "{\"seconds\":" + seconds + "}", Map.of());
        assertThat(held.status()).isEqualTo(200);
    }

    @Test
    void twoPeopleSharingOneCacheEachGetTheirOwnAnswer() throws Exception {
        assertThat(login("frank").exitCode()).isEqualTo(ExitCode.OK);
        assertThat(login("grace").exitCode()).isEqualTo(ExitCode.OK);

        JsonNode frank = whoami("frank");
        JsonNode frankAgain = whoami("frank");
        JsonNode grace = whoami("grace");

        assertThat(frank.get("sub").asText()).isEqualTo("frank");
        assertThat(frankAgain).as("frank's own answer, from the cache").isEqualTo(frank);
        assertThat(grace.get("sub").asText()).as("not frank's cached answer").isEqualTo("grace");
        assertThat(grace.get("calls").intValue()).isEqualTo(1);
    }

    /** A tools/call of {@code tool} through serve --http at {@code port}, as the holder of {@code token}. */
    private static JsonNode callOverHttp(int port, String token, String tool, String arguments) throws Exception {
        RawHttp.Answer answer = RawHttp.post(port, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                + "{\"name\":\"" + tool + "\",\"arguments\":" + arguments + "}}", Map.of("Authorization", "Bearer " + token));
        assertThat(answer.status()).as(answer.body()).isEqualTo(200);
        JsonNode json = answer.header("content-type").startsWith("text/event-stream")
                ? answer.events().get(answer.events().size() - 1) : answer.json();
        assertThat(json.has("result")).as(json.toString()).isTrue();
        return json.get("result");
    }

    private static String text(JsonNode result) {
        return result.at("/content/0/text").asText();
    }

    @Test
    void throughServeHttpEachAgentsPersonReachesTheServerAsThemselvesByTokenExchange() throws Exception {
        Files.writeString(dir.resolve("execache.yaml"), """
                servers:
                  person:
                    url: "%s"
                    identity: exchange
                    oauth: {client_id: execache-gateway, client_secret: "${GATEWAY_SECRET}"}
                """.formatted(serverUrl));
        Map<String, String> environment = new HashMap<>(environment("serve"));
        environment.put("EXECACHE_WARM_POOL", "0");
        environment.put("GATEWAY_SECRET", "execache-gateway-secret-0123456789");
        try (HttpServeProcess serve = HttpServeProcess.start(environment, "--store", "memory", "--http", "127.0.0.1:0",
                "--oauth-issuer", provider.issuer(), "--config", dir.resolve("execache.yaml").toString())) {
            String run = "execache:read execache:run";
            String runner = provider.token("agent-runner", run, serve.url());
            String full = provider.token("agent-full", run, serve.url());
            long now = System.currentTimeMillis() / 1000;
            ObjectNode expired = JSON.createObjectNode().put("iss", provider.issuer()).put("sub", "erin")
                    .put("aud", serve.url()).put("scope", run).put("iat", now - 600).put("exp", now - 20);
            // serve takes it (a minute of clock skew), the provider exchanges no expired token
            String erin = provider.mint(expired, "current");
            ObjectNode refused = expired.deepCopy().put("sub", "refused-ivan").put("exp", now + 300);
            String ivan = provider.mint(refused, "current");
            await().atMost(Duration.ofMinutes(1)).ignoreExceptions().until(() -> text(callOverHttp(serve.port(), runner,
                    "person__whoami", "{}")).contains("agent-runner"));

            JsonNode runnerAnswer = JSON.readTree(text(callOverHttp(serve.port(), runner, "person__whoami", "{}")));
            JsonNode fullFirst = callOverHttp(serve.port(), full, "person__whoami", "{}");
            JsonNode fullAgain = callOverHttp(serve.port(), full, "person__whoami", "{}");
            JsonNode runnerAgain = callOverHttp(serve.port(), runner, "person__whoami", "{}");
            JsonNode fromCode = callOverHttp(serve.port(), full, "execute_code",
                    "{\"code\":\"return await tools.person.whoami({})\"}");
            JsonNode erinAnswer = callOverHttp(serve.port(), erin, "person__whoami", "{}");
            JsonNode ivanAnswer = callOverHttp(serve.port(), ivan, "person__whoami", "{}");

            assertThat(runnerAnswer.get("sub").asText()).isEqualTo("agent-runner");
            assertThat(runnerAnswer.get("aud").asText()).as("a token meant for the server").isEqualTo(serverUrl);
            assertThat(JSON.readTree(text(fullFirst)).get("sub").asText()).as("not agent-runner's cached answer")
                    .isEqualTo("agent-full");
            assertThat(JSON.readTree(text(fullFirst)).get("calls").intValue()).isEqualTo(1);
            assertThat(fullAgain.at("/_meta/dev.execache~1cache/status").asText()).isEqualTo("hit");
            assertThat(JSON.readTree(text(fullAgain)).get("sub").asText()).isEqualTo("agent-full");
            assertThat(runnerAgain.at("/_meta/dev.execache~1cache/status").asText()).isEqualTo("hit");
            assertThat(JSON.readTree(text(runnerAgain)).get("sub").asText()).isEqualTo("agent-runner");
            assertThat(text(fromCode)).as(fromCode.toString()).contains("agent-full").doesNotContain("agent-runner");
            assertThat(erinAnswer.path("isError").asBoolean()).as(erinAnswer.toString()).isTrue();
            assertThat(text(erinAnswer)).contains("server person: the identity provider would not exchange your access"
                    + " token for one meant for this server").contains("subject_token has expired")
                    .contains("sign in to execache again");
            assertThat(ivanAnswer.path("isError").asBoolean()).as(ivanAnswer.toString()).isTrue();
            assertThat(text(ivanAnswer)).contains("the subject may not reach that resource");
            serve.close();
            Ran config = run(environment, "config");
            assertThat(config.out()).contains("person " + serverUrl + " oauth execache-gateway as each agent's person"
                    + " (token exchange) (GATEWAY_SECRET set)");
            String printed = String.join("\n", serve.stderr()) + erinAnswer + ivanAnswer + config.printed();
            for (String secret : List.of(runner, full, erin, ivan, "execache-gateway-secret-0123456789")) {
                assertThat(printed).doesNotContain(secret);
            }
        }
    }
}
