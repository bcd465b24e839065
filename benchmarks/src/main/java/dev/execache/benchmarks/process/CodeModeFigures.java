package dev.execache.benchmarks.process;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.benchmarks.support.Artifacts;
import dev.execache.benchmarks.support.Scratch;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What {@code expose: code} saves an agent's context, and whether {@code search_tools} finds what it needs: sizes
 * and recall, which do not depend on the machine's load, so a run prints the same figures on any machine.
 *
 * <ol>
 *   <li>{@code tools/list} in bytes (its {@code {"tools":[...]}} written as compact JSON) and tokens estimated as
 *       bytes / 4: each server called directly; the same servers behind {@code execache serve --expose all} and
 *       {@code --expose code}. The servers: the reference servers {@code server-memory}, {@code server-filesystem}
 *       (given an empty temporary directory) and {@code server-everything}, the tests' lab server; then the same
 *       with a generated server of {@value #FIXTURE_TOOLS} tools (20 domains, raw JSON-RPC, written at run time).</li>
 *   <li>{@code search_tools} recall@5 through {@code serve --expose code} in front of the four real servers, over
 *       {@link #QUERIES}: the share of queries one of whose expected tools is among the first five matches; each
 *       miss printed with what came first. Then the same with the generated server's tools beside them.</li>
 * </ol>
 *
 * <p>{@code java -cp benchmarks/target/benchmarks.jar dev.execache.benchmarks.process.CodeModeFigures} (finds
 * {@code app-cli/target/execache.jar} and {@code app-cli/target/node} as the other process figures do).
 */
public final class CodeModeFigures {
    static final int FIXTURE_TOOLS = 500;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int K = 5;

    /**
     * The queries and the tools that meet them ({@code SERVER__TOOL}, any one counts). Written from needs, the way a
     * person states what they want done, not copied from the tools' descriptions.
     */
    static final List<Query> QUERIES = List.of(
            // memory: a knowledge graph of entities, relations and observations
            q("remember that Alice works at Acme", "memory__create_entities", "memory__add_observations",
                    "memory__create_relations"),
            q("note a new fact about a person I already told you about", "memory__add_observations"),
            q("link Bob to his manager Carol", "memory__create_relations"),
            q("forget everything you know about Dave", "memory__delete_entities"),
            q("Alice no longer works at Acme, drop that fact", "memory__delete_observations",
                    "memory__delete_relations"),
            q("remove the connection between two people", "memory__delete_relations"),
            q("show me everything you remember", "memory__read_graph"),
            q("what do you know about Alice", "memory__search_nodes", "memory__open_nodes"),
            q("look up the people named Smith in your memory", "memory__search_nodes"),
            q("pull up the records for Alice and Bob by name", "memory__open_nodes"),
            q("store a new person in the knowledge graph", "memory__create_entities"),
            // filesystem, on a directory it was given
            q("what files are in this folder", "fs__list_directory", "fs__list_directory_with_sizes"),
            q("show me what is inside notes.txt", "fs__read_text_file", "fs__read_file"),
            q("open a picture from disk", "fs__read_media_file"),
            q("save this text to a new file", "fs__write_file"),
            q("change one line of my config file", "fs__edit_file"),
            q("make a new folder called reports", "fs__create_directory"),
            q("rename draft.md to final.md", "fs__move_file"),
            q("find every csv file under this project", "fs__search_files"),
            q("how big is this file and when was it last changed", "fs__get_file_info"),
            q("which folders am I allowed to touch", "fs__list_allowed_directories"),
            q("show the whole folder hierarchy nested", "fs__directory_tree"),
            q("read several files at once", "fs__read_multiple_files"),
            q("list the files here with how much space each takes", "fs__list_directory_with_sizes"),
            q("read the first 20 lines of a log", "fs__read_text_file"),
            // everything: the reference server that shows each MCP feature
            q("print back what I send", "everything__echo"),
            q("add two numbers together", "everything__get-sum"),
            q("what environment variables does the server see", "everything__get-env"),
            q("give me a small test picture", "everything__get-tiny-image"),
            q("run something slow that reports how far along it is", "everything__trigger-long-running-operation"),
            q("ask the user a question and wait for their answer", "everything__trigger-elicitation-request"),
            q("have the client's language model write something", "everything__trigger-sampling-request"),
            q("get a link to one of the server's resources", "everything__get-resource-links",
                    "everything__get-resource-reference"),
            q("hand me a zipped archive of some files", "everything__gzip-file-as-resource"),
            q("give me the result as structured data with a schema", "everything__get-structured-content"),
            q("show a tool's annotations in its answer", "everything__get-annotated-message"),
            q("start sending me log messages now and then", "everything__toggle-simulated-logging"),
            q("send me updates when resources change", "everything__toggle-subscriber-updates"),
            q("which root folders did the client share", "everything__get-roots-list"),
            q("print the weather forecast for a city", "everything__get-structured-content"),
            // lab: the tests' own server
            q("how many times has the counter been read", "lab__get_count"),
            q("bump the counter up by one", "lab__increment"),
            q("which process id is this server running as", "lab__pid"),
            q("wait a few seconds before answering", "lab__sleep"),
            q("a tool that always returns an error", "lab__fail"),
            q("kill the server in the middle of a call", "lab__crash"),
            q("what trace headers came with my request", "lab__trace_context"),
            q("write a log message at warning level", "lab__log"),
            q("report progress in several steps", "lab__progress_steps"),
            q("which calls did I cancel", "lab__cancellations"),
            q("rewrite the description of one of your tools", "lab__set_description"),
            q("what logging levels did the client ask for", "lab__log_levels"),
            q("show the items of my account", "lab__private_items"));

    record Query(String text, List<String> expected) {
    }

    private static Query q(String text, String... expected) {
        return new Query(text, List.of(expected));
    }

    /** A server's command line and environment. */
    record Server(String name, List<String> command, Map<String, String> env) {
    }

    private CodeModeFigures() {
    }

    public static void main(String[] args) throws Exception {
        Path jar = Artifacts.execacheJar();
        Path node = Artifacts.nodeDirectory();
        Path modules = node.resolve("node_modules/@modelcontextprotocol");
        Path scratch = Files.createTempDirectory("execache-code-mode-figures");
        try {
            Path files = Files.createDirectories(scratch.resolve("files"));
            List<Server> real = List.of(
                    new Server("memory", List.of("node", modules.resolve("server-memory/dist/index.js").toString()),
                            Map.of("MEMORY_FILE_PATH", scratch.resolve("memory.jsonl").toString())),
                    new Server("fs", List.of("node", modules.resolve("server-filesystem/dist/index.js").toString(),
                            files.toString()), Map.of()),
                    new Server("everything", List.of("node",
                            modules.resolve("server-everything/dist/index.js").toString(), "stdio"), Map.of()),
                    new Server("lab", List.of("node", node.resolve("lab-server.mjs").toString()), Map.of()));
            Path fixture = Files.writeString(scratch.resolve("many-tools.mjs"), fixtureScript());
            Server many = new Server("many", List.of("node", fixture.toString()), Map.of());
            List<Server> withMany = new ArrayList<>(real);
            withMany.add(many);

            System.out.println("tools/list: {\"tools\":[...]} as compact JSON, UTF-8 bytes; tokens estimated as bytes / 4");
            System.out.println("every client declares roots, sampling and elicitation, as serve does to its servers");
            System.out.println();
            Map<String, Listed> direct = new LinkedHashMap<>();
            for (Server server : withMany) {
                direct.put(server.name(), listDirect(server));
            }
            sizes(jar, scratch, real, direct, "four servers (memory, fs, everything, lab)", false);
            sizes(jar, scratch, withMany, direct,
                    "the four + a generated server of " + FIXTURE_TOOLS + " tools", true);

            System.out.println();
            System.out.printf(Locale.ROOT, "search_tools recall@%d, %d queries written from needs, through serve --expose code%n",
                    K, QUERIES.size());
            recall(jar, scratch, real, direct, "over the four real servers' tools");
            recall(jar, scratch, withMany, direct, "the same, with the generated server's " + FIXTURE_TOOLS
                    + " tools beside them");
        } finally {
            Scratch.deleteTree(scratch);
        }
    }

    record Listed(List<String> names, long bytes) {
    }

    private static Listed listDirect(Server server) throws IOException, InterruptedException {
        try (LineClient client = new LineClient(server.command(), server.env())) {
            // server-everything registers the tools a client's capabilities allow once it is initialized
            Thread.sleep(1000);
            return client.listTools();
        }
    }

    private static void sizes(Path jar, Path scratch, List<Server> servers, Map<String, Listed> direct, String title,
            boolean summaryOnly) throws Exception {
        int tools = 0;
        long bytes = 0;
        System.out.println(title + ":");
        String row = "  %-44s %6s %9s %9s%n";
        System.out.printf(Locale.ROOT, row, "", "tools", "bytes", "~tokens");
        for (Server server : servers) {
            Listed listed = direct.get(server.name());
            tools += listed.names().size();
            bytes += listed.bytes();
            if (!summaryOnly || server.name().equals("many")) {
                printRow(row, "directly: " + server.name(), listed.names().size(), listed.bytes());
            }
        }
        printRow(row, "directly: all " + servers.size() + " together (sum)", tools, bytes);
        Listed all = throughServe(jar, scratch, servers, "all", tools);
        Listed code = throughServe(jar, scratch, servers, "code", tools);
        printRow(row, "through serve --expose all", all.names().size(), all.bytes());
        printRow(row, "through serve --expose code", code.names().size(), code.bytes());
        System.out.printf(Locale.ROOT, "  code / direct: %.3f (%.1fx smaller); all - direct: %+d bytes"
                        + " (execache's own %d tools in all mode, and the servers' tools renamed SERVER__TOOL)%n",
                (double) code.bytes() / bytes, (double) bytes / code.bytes(), all.bytes() - bytes,
                all.names().size() - tools);
        System.out.println("  in code mode: " + String.join(", ", code.names()));
    }

    private static void printRow(String row, String what, int tools, long bytes) {
        System.out.printf(Locale.ROOT, row, what, tools, bytes, bytes / 4);
    }

    /** tools/list through serve once every server has joined (its tools are listed, or searched in code mode). */
    private static Listed throughServe(Path jar, Path scratch, List<Server> servers, String expose, int serversTools)
            throws Exception {
        try (LineClient serve = serve(jar, scratch, servers, expose)) {
            awaitJoined(serve, expose, serversTools);
            return serve.listTools();
        }
    }

    private static LineClient serve(Path jar, Path scratch, List<Server> servers, String expose) throws IOException {
        StringBuilder yaml = new StringBuilder("servers:\n");
        for (Server server : servers) {
            yaml.append("  ").append(server.name()).append(":\n    command: ").append(quoted(server.command().get(0)))
                    .append("\n    args: [");
            List<String> args = server.command().subList(1, server.command().size());
            for (int i = 0; i < args.size(); i++) {
                yaml.append(i == 0 ? "" : ", ").append(quoted(args.get(i)));
            }
            yaml.append("]\n");
            if (!server.env().isEmpty()) {
                yaml.append("    env: {");
                List<String> pairs = new ArrayList<>();
                server.env().forEach((key, value) -> pairs.add(key + ": " + quoted(value)));
                yaml.append(String.join(", ", pairs)).append("}\n");
            }
        }
        Path directory = Files.createTempDirectory(scratch, "serve-" + expose);
        Path config = Files.writeString(directory.resolve("execache.yaml"), yaml);
        List<String> command = new ArrayList<>(Serve.command(jar, config));
        command.addAll(List.of("--expose", expose));
        return new LineClient(command, Map.of("EXECACHE_WARM_POOL", "0"));
    }

    private static String quoted(String text) {
        return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** Waits (at most two minutes) until serve holds every server's tools. */
    private static void awaitJoined(LineClient serve, String expose, int serversTools) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.getLong("wait", 120));
        int seen = -1;
        List<String> last = List.of();
        while (System.nanoTime() < deadline) {
            if (expose.equals("code")) {
                JsonNode answer = serve.callTool("search_tools", Map.of("query", "tool", "limit", 1));
                seen = answer.at("/result/structuredContent/tools").asInt(-1);
            } else {
                last = serve.listTools().names();
                seen = (int) last.stream().filter(name -> name.contains("__")).count();
            }
            if (seen == serversTools) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("serve --expose " + expose + " holds " + seen + " of the servers' "
                + serversTools + " tools after " + Long.getLong("wait", 120) + " s " + last);
    }

    private static void recall(Path jar, Path scratch, List<Server> servers, Map<String, Listed> direct, String title)
            throws Exception {
        int serversTools = servers.stream().mapToInt(server -> direct.get(server.name()).names().size()).sum();
        for (Query query : QUERIES) {
            for (String expected : query.expected()) {
                String server = expected.substring(0, expected.indexOf("__"));
                String tool = expected.substring(expected.indexOf("__") + 2);
                if (!direct.get(server).names().contains(tool)) {
                    throw new IllegalStateException("'" + query.text() + "' expects " + expected
                            + ", which the server does not offer");
                }
            }
        }
        int found = 0;
        int first = 0;
        List<String> misses = new ArrayList<>();
        try (LineClient serve = serve(jar, scratch, servers, "code")) {
            awaitJoined(serve, "code", serversTools);
            for (Query query : QUERIES) {
                JsonNode answer = serve.callTool("search_tools", Map.of("query", query.text(), "limit", K));
                List<String> names = new ArrayList<>();
                answer.at("/result/structuredContent/matches").forEach(match -> names.add(match.get("name").asText()));
                int rank = -1;
                for (int i = 0; i < names.size() && rank < 0; i++) {
                    if (query.expected().contains(names.get(i))) {
                        rank = i;
                    }
                }
                if (rank >= 0) {
                    found++;
                    first += rank == 0 ? 1 : 0;
                } else {
                    misses.add("    \"" + query.text() + "\": expected " + String.join(" or ", query.expected())
                            + "; got " + (names.isEmpty() ? "nothing" : String.join(", ", names)));
                }
            }
        }
        System.out.printf(Locale.ROOT, "  %s (%d tools): recall@%d %d/%d = %.1f%% (first match: %d/%d = %.1f%%)%n",
                title, serversTools, K, found, QUERIES.size(), 100.0 * found / QUERIES.size(), first, QUERIES.size(),
                100.0 * first / QUERIES.size());
        if (!misses.isEmpty()) {
            System.out.println("  misses:");
            misses.forEach(System.out::println);
        }
    }

    /**
     * A server of {@value #FIXTURE_TOOLS} tools that answers initialize, tools/list and tools/call with raw JSON-RPC
     * lines: 20 domains, five kinds of record each, five operations on each kind.
     */
    static String fixtureScript() throws IOException {
        String[][] domains = {
                {"calendar", "the calendar", "event:title:starts_at", "attendee:email:response", "room:name:capacity",
                        "reminder:minutes_before:channel", "availability:day:timezone"},
                {"mail", "the mailbox", "message:subject:body", "draft:recipient:body", "label:name:color",
                        "filter:sender:action", "signature:name:text"},
                {"crm", "the CRM", "contact:full_name:phone", "company:name:industry", "deal:amount:stage",
                        "lead:source:score", "note:subject:text"},
                {"billing", "billing", "invoice:customer:total", "subscription:plan:renews_at", "coupon:code:percent_off",
                        "refund:invoice_id:amount", "tax_rate:region:percent"},
                {"inventory", "the warehouse stock", "product:sku:quantity", "warehouse:city:capacity",
                        "supplier:name:lead_days", "purchase_order:supplier:total", "stock_count:location:counted"},
                {"shipping", "shipping", "shipment:carrier:tracking_number", "parcel:weight_kg:dimensions",
                        "label:carrier:service", "pickup:address:date", "return_label:order_id:reason"},
                {"hr", "the HR system", "employee:name:department", "leave_request:days:reason",
                        "payslip:month:net_pay", "job_opening:title:location", "review:employee_id:rating"},
                {"tickets", "the help desk", "ticket:subject:priority", "comment:ticket_id:text", "macro:name:actions",
                        "sla_policy:name:hours", "agent:name:team"},
                {"wiki", "the wiki", "page:title:content", "space:key:name", "attachment:page_id:filename",
                        "page_comment:page_id:text", "template:name:body"},
                {"chat", "team chat", "channel:name:topic", "chat_message:channel:text", "thread:channel:title",
                        "reaction:message_id:emoji", "user_status:user:text"},
                {"analytics", "web analytics", "report:metric:period", "dashboard:name:widgets", "segment:name:rule",
                        "goal:name:target", "funnel:name:steps"},
                {"monitoring", "monitoring", "alert:service:severity", "incident:title:status", "metric:name:unit",
                        "uptime_check:url:interval", "on_call_shift:engineer:week"},
                {"ci", "the build server", "pipeline:branch:status", "build_job:name:runner", "artifact:build_id:path",
                        "deployment:environment:version", "secret:name:scope"},
                {"repo", "the code host", "pull_request:title:branch", "issue:title:labels", "release:tag:notes",
                        "branch:name:base", "code_review:pull_request:verdict"},
                {"db", "the database", "table:name:columns", "query_plan:sql:cost", "backup:database:taken_at",
                        "index:table:columns", "db_user:name:role"},
                {"storage", "object storage", "bucket:name:region", "object:key:size", "upload_url:key:expires_in",
                        "lifecycle_rule:bucket:days", "access_policy:bucket:rules"},
                {"dns", "DNS", "zone:domain:ttl", "record:hostname:value", "certificate:domain:expires_at",
                        "redirect:source:target", "nameserver:host:address"},
                {"payments", "the payment processor", "payment:amount:currency", "card:last4:expiry",
                        "payout:amount:bank_account", "dispute:payment_id:reason", "customer_wallet:customer:balance"},
                {"marketing", "marketing", "campaign:name:budget", "newsletter:subject:audience",
                        "ad_group:campaign:bid", "landing_page:title:url", "survey:title:questions"},
                {"travel", "travel booking", "flight:origin:destination", "hotel_booking:city:nights",
                        "car_rental:city:days", "itinerary:traveler:trip", "expense:amount:category"}};
        ArrayNode tools = JSON.createArrayNode();
        for (String[] domain : domains) {
            String prefix = domain[0];
            String system = domain[1];
            for (int i = 2; i < domain.length; i++) {
                String[] kind = domain[i].split(":");
                String thing = kind[0].replace('_', ' ');
                String a = kind[1];
                String b = kind[2];
                String aWords = a.replace('_', ' ');
                String bWords = b.replace('_', ' ');
                tools.add(tool(prefix + "_list_" + kind[0] + "s",
                        "Lists the " + thing + "s in " + system + ", newest first; filter by " + aWords
                                + " and page with the cursor.",
                        new String[][] {{a, "string", "Only " + thing + "s with this " + aWords}, {"limit", "integer",
                                "At most this many (1-100)"}, {"cursor", "string", "Where the last page ended"}},
                        new String[0]));
                tools.add(tool(prefix + "_get_" + kind[0],
                        "Gets one " + thing + " from " + system + " by its id, with its " + aWords + " and " + bWords + ".",
                        new String[][] {{"id", "string", "The " + thing + "'s id"}}, new String[] {"id"}));
                tools.add(tool(prefix + "_create_" + kind[0],
                        "Creates a " + thing + " in " + system + " with the " + aWords + " and " + bWords + " given.",
                        new String[][] {{a, "string", "The new " + thing + "'s " + aWords}, {b, "string",
                                "The new " + thing + "'s " + bWords}}, new String[] {a}));
                tools.add(tool(prefix + "_update_" + kind[0],
                        "Changes the " + bWords + " of an existing " + thing + " in " + system + ".",
                        new String[][] {{"id", "string", "The " + thing + "'s id"}, {b, "string", "Its new " + bWords}},
                        new String[] {"id", b}));
                tools.add(tool(prefix + "_delete_" + kind[0],
                        "Deletes a " + thing + " from " + system + "; this cannot be undone.",
                        new String[][] {{"id", "string", "The " + thing + "'s id"}, {"confirm", "boolean",
                                "Must be true"}}, new String[] {"id", "confirm"}));
            }
        }
        if (tools.size() != FIXTURE_TOOLS) {
            throw new IllegalStateException("the fixture has " + tools.size() + " tools");
        }
        return """
                // A generated MCP server of %d tools over raw JSON-RPC lines (execache's CodeModeFigures).
                import { createInterface } from "node:readline";
                const tools = %s;
                const send = (message) => process.stdout.write(JSON.stringify(message) + "\\n");
                createInterface({ input: process.stdin }).on("line", (line) => {
                  const request = JSON.parse(line);
                  if (request.id === undefined) return;
                  const answer = (result) => send({ jsonrpc: "2.0", id: request.id, result });
                  switch (request.method) {
                    case "initialize":
                      return answer({ protocolVersion: request.params.protocolVersion ?? "2025-06-18",
                        capabilities: { tools: {} }, serverInfo: { name: "many-tools", version: "1.0.0" } });
                    case "tools/list": return answer({ tools });
                    case "tools/call":
                      return answer({ content: [{ type: "text", text: JSON.stringify({ tool: request.params.name,
                        arguments: request.params.arguments ?? {} }) }] });
                    case "ping": return answer({});
                    default:
                      return send({ jsonrpc: "2.0", id: request.id, error: { code: -32601, message: "no " + request.method } });
                  }
                });
                """.formatted(FIXTURE_TOOLS, JSON.writeValueAsString(tools));
    }

    private static ObjectNode tool(String name, String description, String[][] parameters, String[] required) {
        ObjectNode tool = JSON.createObjectNode();
        tool.put("name", name);
        tool.put("description", description);
        ObjectNode schema = tool.putObject("inputSchema");
        schema.put("type", "object");
        ObjectNode properties = schema.putObject("properties");
        for (String[] parameter : parameters) {
            properties.putObject(parameter[0]).put("type", parameter[1]).put("description", parameter[2]);
        }
        ArrayNode names = schema.putArray("required");
        for (String each : required) {
            names.add(each);
        }
        return tool;
    }

    /** One JSON-RPC line at a time over a process's stdio, as {@link RawLineClient}, with an environment. */
    private static final class LineClient implements AutoCloseable {
        /**
         * What an agent host declares, as serve declares to its servers: server-everything offers four tools more to
         * a client with roots, sampling and elicitation. The client answers no request of a server's (roots/list is
         * an error, so server-filesystem keeps the directory it was given).
         */
        private static final Map<String, Object> CAPABILITIES = Map.of("roots", Map.of("listChanged", true),
                "sampling", Map.of(), "elicitation", Map.of("form", Map.of(), "url", Map.of()));
        private final Process process;
        private final OutputStream in;
        private final BufferedReader out;
        private int nextId = 1;

        LineClient(List<String> command, Map<String, String> env) throws IOException {
            ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD);
            builder.environment().putAll(env);
            process = builder.start();
            in = process.getOutputStream();
            out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            request("initialize", Map.of("protocolVersion", "2025-06-18", "capabilities", CAPABILITIES,
                    "clientInfo", Map.of("name", "execache-code-mode-figures", "version", "1")));
            send(Map.of("jsonrpc", "2.0", "method", "notifications/initialized"));
        }

        /** Every page of tools/list: the names and the bytes of {@code {"tools":[...]}} as compact JSON. */
        Listed listTools() throws IOException {
            ArrayNode tools = JSON.createArrayNode();
            String cursor = null;
            do {
                JsonNode answer = request("tools/list", cursor == null ? Map.of() : Map.of("cursor", cursor));
                JsonNode result = answer.get("result");
                if (result == null) {
                    throw new IllegalStateException("tools/list failed: " + answer);
                }
                tools.addAll((ArrayNode) result.get("tools"));
                cursor = result.hasNonNull("nextCursor") ? result.get("nextCursor").asText() : null;
            } while (cursor != null);
            List<String> names = new ArrayList<>();
            tools.forEach(tool -> names.add(tool.get("name").asText()));
            ObjectNode listed = JSON.createObjectNode();
            listed.set("tools", tools);
            return new Listed(names, JSON.writeValueAsBytes(listed).length);
        }

        JsonNode callTool(String name, Map<String, Object> arguments) throws IOException {
            JsonNode answer = request("tools/call", Map.of("name", name, "arguments", arguments));
            if (answer.has("error") || answer.at("/result/isError").asBoolean(false)) {
                throw new IllegalStateException(name + " failed: " + answer);
            }
            return answer;
        }

        private JsonNode request(String method, Map<String, Object> params) throws IOException {
            int id = nextId++;
            send(Map.of("jsonrpc", "2.0", "id", id, "method", method, "params", params));
            String line;
            while ((line = out.readLine()) != null) {
                if (!line.startsWith("{")) {
                    continue;
                }
                JsonNode message = JSON.readTree(line);
                if (message.has("method")) {
                    if (message.has("id")) {
                        // a request of the server's own (roots, sampling, ...): not offered by this client
                        send(Map.of("jsonrpc", "2.0", "id", JSON.treeToValue(message.get("id"), Object.class),
                                "error", Map.of("code", -32601, "message", "not supported")));
                    }
                    continue;
                }
                if (message.path("id").asInt(-1) == id) {
                    return message;
                }
            }
            throw new IOException("the server ended before answering " + method);
        }

        private void send(Object message) throws IOException {
            in.write((JSON.writeValueAsString(message) + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
        }

        @Override
        public void close() {
            try {
                in.close();
            } catch (IOException e) {
                // it ended already
            }
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
