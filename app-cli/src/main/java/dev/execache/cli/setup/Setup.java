package dev.execache.cli.setup;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.cli.settings.Redaction;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code execache setup}: finds the MCP servers a person configured in their clients, moves
 * them under {@code servers:} in their execache configuration, and puts one execache entry in
 * each client in their place, with a backup of every file it changes and an exact undo.
 * Secrets (env values, header values) move from file to file and are never printed.
 */
public final class Setup {
    /** The name of the entry that replaces the moved servers in each client. */
    static final String ENTRY = "execache";
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final String MASK = "***";
    /** The path the launcher was started as, before it followed links: the release's bin/execache sets it. */
    static final String INVOKED_AS = "EXECACHE_INVOKED_AS";
    /** execache's own start and the 30 s a server of its may take to start, with room to spare. */
    static final int CODEX_STARTUP_TIMEOUT_SEC = 40;
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)}");
    private static final Pattern SECRET_FLAG = Pattern.compile("(?i)--?[a-z0-9_-]*(token|key|secret|password|passwd|auth)[a-z0-9_-]*");

    private final Map<String, String> env;
    private final Path workingDir;
    private final PrintWriter out;
    private final Locations locations;

    public Setup(Map<String, String> env, Path workingDir, PrintWriter out) {
        this.env = env;
        this.workingDir = workingDir;
        this.out = out;
        this.locations = Locations.of(env, workingDir);
    }

    /** What to move: every client and server when the lists are empty. */
    public record Selection(List<String> clients, List<String> servers) {
        public Selection {
            clients = List.copyOf(clients);
            servers = List.copyOf(servers);
        }
    }

    /** The person's execache configuration: $XDG_CONFIG_HOME/execache/execache.yaml (~/.config/...). */
    public Path defaultConfig() {
        return locations.configHome().resolve("execache/execache.yaml");
    }

    /** Where the backups of each --apply are kept: $XDG_STATE_HOME/execache/setup (~/.local/state/...). */
    Backups backups() {
        String state = env.get("XDG_STATE_HOME");
        Path root = state != null && !state.isBlank() && Path.of(state).isAbsolute() ? Path.of(state)
                : locations.home().resolve(".local/state");
        return new Backups(root.resolve("execache/setup"));
    }

    /** Lists each client file found and the servers it lists; returns how many could move. */
    public int show(Selection selection) throws IOException {
        List<ClientConfig> configs = read(selection);
        if (configs.isEmpty()) {
            out.println("No MCP client configuration found. Looked for:");
            for (ClientFile file : candidates(selection)) {
                out.println("  " + file.describe());
            }
            return 0;
        }
        int movable = 0;
        for (ClientConfig config : configs) {
            out.println(config.file().describe());
            if (config.servers().isEmpty()) {
                out.println("  (no servers)");
            }
            int width = config.servers().stream().mapToInt(server -> server.name().length()).max().orElse(0);
            for (FoundServer server : config.servers()) {
                out.println("  " + pad(server.name(), width) + "  " + describe(server)
                        + (server.where().isEmpty() ? "" : "  [" + server.where() + "]"));
                if (server.movable() && selected(server, selection)) {
                    movable++;
                }
            }
        }
        out.println();
        // the same server in several clients (same name, same definition) moves once
        long servers = name(configs, selection, NODES.objectNode()).stream().filter(Move::added).count();
        if (servers == 0) {
            out.println("Nothing to move behind execache.");
        } else {
            out.println(servers + (servers == 1 ? " server" : " servers") + " can move behind execache"
                    + (movable > servers ? " (listed " + movable + " times in the clients' files)" : "")
                    + ": execache setup --apply (add --dry-run to see the change first).");
        }
        return (int) servers;
    }

    /**
     * Moves the selected servers into {@code config} and rewrites each client that listed one.
     *
     * @param execache the command the clients will start execache with
     */
    public void apply(Selection selection, Path config, Launcher execache, boolean dryRun) throws IOException {
        List<ClientConfig> configs = read(selection);
        Set<String> unknown = new TreeSet<>(selection.servers());
        configs.forEach(client -> client.servers().forEach(server -> unknown.remove(server.name())));
        if (!unknown.isEmpty()) {
            throw new SetupException("--server " + String.join(", ", unknown) + ": no client file found lists "
                    + (unknown.size() == 1 ? "it" : "them") + " (execache setup, without options, lists what is there)");
        }
        Path configPath = config.toAbsolutePath().normalize();
        boolean configExists = Files.exists(configPath);
        Path configReal = configExists ? configPath.toRealPath() : configPath;
        byte[] configBytes = configExists ? Files.readAllBytes(configReal) : new byte[0];
        String configText = new String(configBytes, StandardCharsets.UTF_8);
        ObjectNode existing = ExecacheConfig.servers(configPath, configText);

        List<Move> moves = name(configs, selection, existing);
        if (moves.isEmpty()) {
            out.println("Nothing to move: no selected client lists a server that can move behind execache.");
            return;
        }
        List<String> args = new ArrayList<>(execache.args());
        args.addAll(List.of("serve", "--config", configPath.toString()));
        List<Backups.Change> changes = new ArrayList<>();
        Map<ClientConfig, List<Move>> byFile = new LinkedHashMap<>();
        for (Move move : moves) {
            byFile.computeIfAbsent(configOf(configs, move.server().file()), file -> new ArrayList<>()).add(move);
        }
        for (Map.Entry<ClientConfig, List<Move>> file : byFile.entrySet()) {
            String rewritten = rewrite(file.getKey(), file.getValue(), execache.command(), args, forwarded(moves),
                    codexStartupTimeout(file.getKey()));
            changes.add(new Backups.Change(file.getKey().realPath(), rewritten.getBytes(StandardCharsets.UTF_8), null));
        }
        List<ExecacheConfig.Addition> additions = new ArrayList<>();
        for (Move move : moves) {
            if (move.added()) {
                FoundServer server = move.server();
                additions.add(new ExecacheConfig.Addition(move.name(), server.definition(), server.file().client().title
                        + " " + server.file().path() + (server.where().isEmpty() ? "" : ", " + server.where()),
                        comments(move, moves, configs)));
            }
        }
        if (!additions.isEmpty()) {
            String newConfig = ExecacheConfig.add(configPath, configText, additions);
            checkConfig(configPath, newConfig, existing, additions);
            changes.add(new Backups.Change(configReal, newConfig.getBytes(StandardCharsets.UTF_8), SafeFiles.OWNER_ONLY));
        }

        report(moves, byFile, configPath, configExists, execache, args, configs);
        if (dryRun) {
            if (!additions.isEmpty()) {
                out.println();
                out.println((configExists ? "Added to " : "Written to ") + configPath + " (values shown as " + MASK + "):");
                List<ExecacheConfig.Addition> masked = additions.stream()
                        .map(addition -> new ExecacheConfig.Addition(addition.name(), masked(addition.definition()),
                                addition.from(), List.of()))
                        .toList();
                out.println("  servers:");
                ExecacheConfig.render(masked, "  ").forEach(line -> out.println("  " + line));
            }
            out.println();
            out.println("Dry run: nothing was written.");
            return;
        }
        for (ClientConfig client : byFile.keySet()) {
            if (!Arrays.equals(Files.readAllBytes(client.realPath()), client.bytes())) {
                throw new SetupException(client.file().path() + " changed while setup ran (its client is writing it?);"
                        + " nothing was written: run setup again");
            }
        }
        if (configExists && !Arrays.equals(Files.readAllBytes(configReal), configBytes)) {
            throw new SetupException(configPath + " changed while setup ran; nothing was written: run setup again");
        }
        Backups backups = backups();
        Path set = backups.apply(changes);
        out.println();
        out.println("Done. The backup of every file changed is in " + set + ";");
        out.println("execache setup --undo puts them back. Restart the clients (or reload their MCP servers) to use execache.");
    }

    /** Puts back every file of the latest --apply. */
    public void undo(boolean dryRun, boolean force) throws IOException {
        Backups backups = backups();
        Path set = backups.latest();
        if (set == null) {
            out.println("Nothing to undo: no backup in " + backups.root() + ".");
            return;
        }
        List<Backups.Entry> entries = backups.entries(set);
        List<Path> changed = backups.changedSince(entries);
        if (!changed.isEmpty() && !force) {
            throw new SetupException("changed since setup wrote them: " + String.join(", ",
                    changed.stream().map(Path::toString).toList()) + "; undo would lose those changes. Run"
                    + " execache setup --undo --force to put back the backup anyway (kept in " + set + ")");
        }
        out.println((dryRun ? "Would put back" : "Putting back") + " the files of " + set + ":");
        for (Backups.Entry entry : entries) {
            out.println("  " + (entry.existed() ? "restore " : "remove  ") + entry.path()
                    + (entry.existed() ? "" : " (setup created it)")
                    + (changed.contains(entry.path()) ? " (changed since: those changes are lost)" : ""));
        }
        if (dryRun) {
            out.println("Dry run: nothing was written.");
            return;
        }
        backups.undo(set);
        out.println("Done.");
    }

    private record Move(FoundServer server, String name, boolean added, String note) {
    }

    /**
     * The comments written above the server's tables in Codex's files, of each file that lists it (the same server in
     * another client's file too): they go with the one entry it becomes, none is lost with the file's tables.
     */
    private static List<String> comments(Move added, List<Move> moves, List<ClientConfig> configs) {
        List<String> comments = new ArrayList<>();
        for (Move same : moves) {
            if (same.name().equals(added.name()) && same.server().file().toml()) {
                CodexToml.comments(configOf(configs, same.server().file()).text(), same.server().name()).stream()
                        .filter(comment -> !comments.contains(comment)).forEach(comments::add);
            }
        }
        return comments;
    }

    private List<ClientFile> candidates(Selection selection) {
        Set<McpClient> clients = new HashSet<>();
        selection.clients().forEach(id -> clients.add(McpClient.byId(id)));
        return locations.candidates().stream()
                .filter(file -> clients.isEmpty() || clients.contains(file.client()))
                .toList();
    }

    /** The client files that exist, each once (a project file may be the user's own file when run from home). */
    private List<ClientConfig> read(Selection selection) throws IOException {
        List<ClientConfig> configs = new ArrayList<>();
        Set<Path> seen = new HashSet<>();
        for (ClientFile file : candidates(selection)) {
            if (Files.isRegularFile(file.path()) && seen.add(file.path().toRealPath())) {
                try {
                    configs.add(ClientConfig.read(file));
                } catch (SetupException e) {
                    throw new SetupException(e.getMessage() + " (fix it, or leave " + file.client().title
                            + " out: --client with the others)");
                }
            }
        }
        return configs;
    }

    private static ClientConfig configOf(List<ClientConfig> configs, ClientFile file) {
        return configs.stream().filter(config -> config.file().equals(file)).findFirst().orElseThrow();
    }

    private static boolean selected(FoundServer server, Selection selection) {
        return selection.servers().isEmpty() || selection.servers().contains(server.name());
    }

    /**
     * Gives each server to move its name under servers:, the same for every run on the same files:
     * its own (made a valid server name), unless that names a different server already there or
     * moved before it in the order clients are looked at, then NAME-CLIENT (NAME-CLIENT-2, ...). A
     * server listed twice with the same definition is one server.
     */
    private static List<Move> name(List<ClientConfig> configs, Selection selection, ObjectNode existing) {
        Map<String, JsonNode> taken = new LinkedHashMap<>();
        existing.fields().forEachRemaining(server -> taken.put(server.getKey(), server.getValue()));
        Set<String> inConfig = new HashSet<>(taken.keySet());
        List<Move> moves = new ArrayList<>();
        for (ClientConfig config : configs) {
            for (FoundServer server : config.servers()) {
                if (!server.movable() || !selected(server, selection)) {
                    continue;
                }
                String base = validName(server.name());
                String name = base;
                for (int n = 1; taken.containsKey(name) && !taken.get(name).equals(server.definition()); n++) {
                    name = base + "-" + server.file().client().id + (n == 1 ? "" : "-" + n);
                }
                String note = !name.equals(server.name()) && name.equals(base)
                        ? "renamed from '" + server.name() + "': a server name is letters, digits, - and _"
                        : !name.equals(base) ? "'" + base + "' names another server" : null;
                boolean added = !taken.containsKey(name);
                if (!added) {
                    note = inConfig.contains(name) ? "already in the configuration" : "the same server as one above";
                }
                taken.put(name, server.definition());
                moves.add(new Move(server, name, added, note));
            }
        }
        return moves;
    }

    /**
     * How long Codex is to give execache to start and list its tools: Codex waits 10 s unless told, while serve's
     * tools/list waits for its servers still starting, each up to the 30 s it gives a start; longer when an entry of
     * the file (a server that moves, an execache entry of before) was given longer.
     */
    private static int codexStartupTimeout(ClientConfig config) {
        int seconds = CODEX_STARTUP_TIMEOUT_SEC;
        for (JsonNode entry : config.root().path(config.file().client().serversKey)) {
            seconds = Math.max(seconds, entry.path("startup_timeout_sec").asInt(0));
            seconds = Math.max(seconds, (entry.path("startup_timeout_ms").asInt(0) + 999) / 1000);
        }
        return seconds;
    }

    /**
     * How long Codex is to wait for a call of execache's: the longest an entry of the file was given (a server's slow
     * tool is now called through execache), 0 when none was given one (Codex's default, 60 s).
     */
    private static int codexToolTimeout(ClientConfig config) {
        int seconds = 0;
        for (JsonNode entry : config.root().path(config.file().client().serversKey)) {
            seconds = Math.max(seconds, entry.path("tool_timeout_sec").asInt(0));
        }
        return seconds;
    }

    /** What GatewayConfig accepts as a server name: letters, digits, '-' and '_', never '__'. */
    static String validName(String name) {
        String valid = name.replaceAll("[^A-Za-z0-9_-]", "-").replaceAll("_{2,}", "_").replaceAll("^[^A-Za-z0-9]+", "");
        return valid.isEmpty() ? "server" : valid;
    }

    /**
     * The variables execache needs from the client's environment: those the moved servers' headers
     * name, and those a Codex server had Codex pass on (its env_vars).
     */
    private static List<String> forwarded(List<Move> moves) {
        Set<String> names = new TreeSet<>();
        for (Move move : moves) {
            move.server().definition().path("headers").forEach(value -> {
                Matcher variable = VARIABLE.matcher(value.asText());
                while (variable.find()) {
                    names.add(variable.group(1));
                }
            });
            move.server().entry().path("env_vars").forEach(name -> {
                if (name.isTextual()) {
                    names.add(name.textValue());
                }
            });
        }
        return List.copyOf(names);
    }

    private String rewrite(ClientConfig config, List<Move> moves, String command, List<String> args, List<String> forwarded,
            int startupTimeoutSec) {
        ClientFile file = config.file();
        Set<String> movedHere = new HashSet<>();
        List<String> home = List.of(file.client().serversKey);
        JsonNode homeNode = ClientConfig.at(config.root(), home);
        JsonNode present = homeNode.path(ENTRY);
        if (!present.isMissingNode() && !ServerEntries.isExecache(normalizedForCheck(file, present))
                && moves.stream().noneMatch(move -> move.server().name().equals(ENTRY) && move.server().container().equals(home))) {
            throw new SetupException(file.path() + " already has a server named " + ENTRY + " that is not execache;"
                    + " move it too (--server " + ENTRY + ") or rename it first. Nothing was written");
        }
        if (file.toml()) {
            moves.forEach(move -> movedHere.add(move.server().name()));
            Set<String> removed = new LinkedHashSet<>(movedHere);
            removed.add(ENTRY);
            int toolTimeoutSec = codexToolTimeout(config);
            String rewritten = CodexToml.rewrite(config.text(), removed, command, args, forwarded, startupTimeoutSec,
                    toolTimeoutSec);
            ObjectNode expected = config.root().deepCopy();
            ObjectNode servers = expected.with(file.client().serversKey);
            removed.forEach(servers::remove);
            ObjectNode entry = servers.putObject(ENTRY);
            entry.put("command", command);
            ArrayNode argsNode = entry.putArray("args");
            args.forEach(argsNode::add);
            if (!forwarded.isEmpty()) {
                ArrayNode envVars = entry.putArray("env_vars");
                forwarded.forEach(envVars::add);
            }
            entry.put("startup_timeout_sec", startupTimeoutSec);
            if (toolTimeoutSec > 0) {
                entry.put("tool_timeout_sec", toolTimeoutSec);
            }
            check(file, expected, ClientConfig.parseToml(file.path(), rewritten));
            return rewritten;
        }
        ObjectNode entry = entryFor(file, homeNode, command, args);
        Map<List<String>, Set<String>> byContainer = new LinkedHashMap<>();
        byContainer.put(home, new HashSet<>());
        for (Move move : moves) {
            byContainer.computeIfAbsent(move.server().container(), container -> new HashSet<>()).add(move.server().name());
        }
        ObjectNode expected = config.root().deepCopy();
        List<JsonText.Change> changes = new ArrayList<>();
        for (Map.Entry<List<String>, Set<String>> container : byContainer.entrySet()) {
            boolean isHome = container.getKey().equals(home);
            JsonNode original = ClientConfig.at(config.root(), container.getKey());
            ObjectNode updated = NODES.objectNode();
            boolean placed = false;
            if (original.isObject()) {
                for (Map.Entry<String, JsonNode> server : iterable(original)) {
                    boolean replaced = container.getValue().contains(server.getKey()) || isHome && server.getKey().equals(ENTRY);
                    if (!replaced) {
                        updated.set(server.getKey(), server.getValue());
                    } else if (isHome && !placed) {
                        updated.set(ENTRY, entry);
                        placed = true;
                    }
                }
            }
            if (isHome && !placed) {
                updated.set(ENTRY, entry);
            }
            changes.add(new JsonText.Change(container.getKey(), updated));
            ObjectNode parent = expected;
            for (String key : container.getKey().subList(0, container.getKey().size() - 1)) {
                parent = (ObjectNode) parent.get(key);
            }
            parent.set(container.getKey().get(container.getKey().size() - 1), updated);
        }
        String rewritten = new JsonText(file.path(), config.text()).apply(changes);
        check(file, expected, JsonText.parse(file.path(), rewritten));
        return rewritten;
    }

    /** The execache entry in the shape this client writes its own entries. */
    private static ObjectNode entryFor(ClientFile file, JsonNode listed, String command, List<String> args) {
        ObjectNode entry = NODES.objectNode();
        ArrayNode argsNode = NODES.arrayNode();
        args.forEach(argsNode::add);
        switch (file.client()) {
            case CLAUDE_CODE, VSCODE -> {
                entry.put("type", "stdio");
                entry.put("command", command);
                entry.set("args", argsNode);
            }
            case ZED -> {
                boolean nested = false;
                for (JsonNode server : listed) {
                    nested |= server.path("command").isObject();
                }
                if (nested) {
                    ObjectNode commandNode = entry.putObject("command");
                    commandNode.put("path", command);
                    commandNode.set("args", argsNode);
                } else {
                    entry.put("source", "custom");
                    entry.put("command", command);
                    entry.set("args", argsNode);
                }
            }
            default -> {
                entry.put("command", command);
                entry.set("args", argsNode);
            }
        }
        return entry;
    }

    private static JsonNode normalizedForCheck(ClientFile file, JsonNode entry) {
        if (file.client() == McpClient.ZED && entry.path("command").isObject()) {
            ObjectNode flat = NODES.objectNode();
            flat.set("command", entry.path("command").path("path"));
            flat.set("args", entry.path("command").path("args"));
            return flat;
        }
        return entry;
    }

    private static void check(ClientFile file, JsonNode expected, JsonNode written) {
        if (!expected.equals(written)) {
            throw new SetupException("cannot rewrite " + file.path() + " safely (its layout is one setup does not"
                    + " edit); nothing was written. Move its servers by hand, or choose other clients with --client");
        }
    }

    private static void checkConfig(Path path, String text, ObjectNode existing, List<ExecacheConfig.Addition> additions) {
        ObjectNode expected = existing.deepCopy();
        additions.forEach(addition -> expected.set(addition.name(), addition.definition()));
        if (!ExecacheConfig.servers(path, text).equals(expected)) {
            throw new SetupException("cannot add to servers: in " + path + " safely; nothing was written. Add the"
                    + " servers by hand, or name another file with --config");
        }
    }

    private void report(List<Move> moves, Map<ClientConfig, List<Move>> byFile, Path config, boolean configExists,
            Launcher execache, List<String> args, List<ClientConfig> configs) {
        long added = moves.stream().filter(Move::added).count();
        long servers = moves.stream().map(Move::name).distinct().count();
        out.println(servers + (servers == 1 ? " server moves" : " servers move") + " behind execache, under servers: in "
                + config + (configExists ? "" : " (a new file, readable by you only)") + ":");
        int width = moves.stream().mapToInt(move -> move.name().length()).max().orElse(0);
        for (Move move : moves) {
            FoundServer server = move.server();
            out.println("  " + pad(move.name(), width) + "  from " + server.file().describe()
                    + (server.where().isEmpty() ? "" : ", " + server.where())
                    + (move.note() == null ? "" : " (" + move.note() + ")"));
        }
        if (added < servers) {
            out.println("  (" + added + " new under servers:)");
        }
        out.println("Each client file below lists one execache entry in their place ("
                + execache.command() + " " + String.join(" ", args) + "):");
        for (Map.Entry<ClientConfig, List<Move>> file : byFile.entrySet()) {
            out.println("  " + file.getKey().file().path() + ": " + String.join(", ",
                    file.getValue().stream().map(move -> move.server().name()).toList()) + " -> " + ENTRY);
        }
        List<String> staying = new ArrayList<>();
        for (ClientConfig client : configs) {
            for (FoundServer server : client.servers()) {
                if (server.stays() != null) {
                    staying.add("  " + server.name() + " in " + client.file().path() + ": " + server.stays());
                }
            }
        }
        if (!staying.isEmpty()) {
            out.println("Staying where they are:");
            staying.forEach(out::println);
        }
    }

    /** One line about a server: its command and arguments or its URL, the names of its env and headers. */
    static String describe(FoundServer server) {
        if (server.execache()) {
            return "(execache itself)";
        }
        JsonNode shown = server.definition() != null ? server.definition() : server.entry();
        StringBuilder line = new StringBuilder();
        if (shown.path("url").isTextual() || shown.path("serverUrl").isTextual()) {
            String url = shown.path("url").isTextual() ? shown.path("url").textValue() : shown.path("serverUrl").textValue();
            line.append("url ").append(withoutQuery(Redaction.redactUrl(url)));
        } else if (shown.path("command").isTextual() || shown.path("command").isObject()) {
            JsonNode command = shown.path("command");
            line.append("command ").append(command.isObject() ? command.path("path").asText() : command.asText());
            JsonNode args = command.isObject() ? command.path("args") : shown.path("args");
            List<String> shownArgs = new ArrayList<>();
            args.forEach(arg -> shownArgs.add(arg.asText()));
            maskedArgs(shownArgs).forEach(arg -> line.append(' ').append(arg));
        }
        appendNames(line, "env", shown.path("env").isObject() ? shown.path("env") : shown.path("command").path("env"));
        appendNames(line, "headers", shown.path("headers").isObject() ? shown.path("headers") : shown.path("http_headers"));
        if (server.stays() != null) {
            line.append(line.length() == 0 ? "" : "  ").append("(stays: ").append(server.stays()).append(')');
        }
        return line.toString();
    }

    private static void appendNames(StringBuilder line, String label, JsonNode values) {
        if (values.isObject() && !values.isEmpty()) {
            List<String> names = new ArrayList<>();
            values.fieldNames().forEachRemaining(name -> names.add(name + "=" + MASK));
            line.append("  ").append(label).append(' ').append(String.join(" ", names));
        }
    }

    /** Arguments as a person reads them, less what looks like a credential: a flag's value named like one, a URL's password. */
    static List<String> maskedArgs(List<String> args) {
        List<String> shown = new ArrayList<>();
        boolean secretNext = false;
        for (String arg : args) {
            if (secretNext) {
                shown.add(MASK);
                secretNext = false;
            } else if (arg.contains("=") && SECRET_FLAG.matcher(arg.substring(0, arg.indexOf('='))).matches()) {
                shown.add(arg.substring(0, arg.indexOf('=') + 1) + MASK);
            } else {
                secretNext = SECRET_FLAG.matcher(arg).matches();
                shown.add(arg.contains("://") ? withoutQuery(Redaction.redactUrl(arg)) : arg);
            }
        }
        return shown;
    }

    private static String withoutQuery(String url) {
        int query = url.indexOf('?');
        return query < 0 ? url : url.substring(0, query) + "?" + MASK;
    }

    private static ObjectNode masked(ObjectNode definition) {
        ObjectNode copy = definition.deepCopy();
        for (String key : List.of("env", "headers")) {
            if (copy.path(key).isObject()) {
                ObjectNode values = (ObjectNode) copy.get(key);
                List<String> names = new ArrayList<>();
                values.fieldNames().forEachRemaining(names::add);
                names.forEach(name -> values.put(name, MASK));
            }
        }
        if (copy.path("args").isArray()) {
            List<String> args = new ArrayList<>();
            copy.get("args").forEach(arg -> args.add(arg.asText()));
            ArrayNode maskedArgs = copy.putArray("args");
            maskedArgs(args).forEach(maskedArgs::add);
        }
        if (copy.path("url").isTextual()) {
            copy.put("url", withoutQuery(Redaction.redactUrl(copy.get("url").textValue())));
        }
        return copy;
    }

    private static Iterable<Map.Entry<String, JsonNode>> iterable(JsonNode object) {
        List<Map.Entry<String, JsonNode>> fields = new ArrayList<>();
        object.fields().forEachRemaining(fields::add);
        return fields;
    }

    private static String pad(String text, int width) {
        return text + " ".repeat(Math.max(0, width - text.length()));
    }

    /**
     * The command a client runs to start execache: {@code command} with {@code args} before execache's own.
     *
     * @param command an absolute path, or {@code npx}
     */
    public record Launcher(String command, List<String> args) {
        public Launcher {
            args = List.copyOf(args);
        }

        static Launcher of(Path path) {
            return new Launcher(path.toString(), List.of());
        }
    }

    /**
     * The execache command the clients will start: the one named; else the command this one was started as (npm's
     * {@code bin} link, never the file inside node_modules that it points to; {@code npx -y execache@VERSION} when
     * npx ran it from its cache); else the launcher beside this jar; else the one on the PATH.
     */
    public Launcher execacheCommand(Path named) {
        if (named != null) {
            Path path = workingDir.resolve(named).toAbsolutePath().normalize();
            if (!Files.isRegularFile(path) || !Files.isExecutable(path)) {
                throw new SetupException("--execache " + named + " is not an executable file");
            }
            return Launcher.of(path);
        }
        String invokedAs = env.get(INVOKED_AS);
        if (invokedAs != null && !invokedAs.isBlank() && invokedAs.contains(File.separator)) {
            Path path = workingDir.resolve(invokedAs).toAbsolutePath().normalize();
            if (Files.isRegularFile(path) && Files.isExecutable(path)) {
                if (path.toString().contains(File.separator + "_npx" + File.separator)) {
                    String version = ownVersion();
                    return new Launcher("npx", List.of("-y", version == null ? "execache" : "execache@" + version));
                }
                return Launcher.of(path);
            }
        }
        Path code = codeLocation();
        // a checkout: app-cli/target/execache.jar (or classes/) beside ./execache; a release: lib/ beside bin/execache
        if (code != null && code.getParent() != null && code.getParent().getParent() != null) {
            Path above = code.getParent().getParent();
            for (Path candidate : above.getParent() == null ? List.of(above.resolve("bin/execache"))
                    : List.of(above.getParent().resolve("execache"), above.resolve("bin/execache"))) {
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return Launcher.of(candidate.toAbsolutePath().normalize());
                }
            }
        }
        String path = env.getOrDefault("PATH", "");
        for (String dir : path.split(File.pathSeparator)) {
            if (!dir.isBlank() && Path.of(dir).isAbsolute()) {
                Path candidate = Path.of(dir, "execache");
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return Launcher.of(candidate);
                }
            }
        }
        throw new SetupException("cannot find the execache command the clients should start: name it with --execache PATH");
    }

    /** The version the build wrote into the jar, or null when it is not known (a build from the IDE). */
    private static String ownVersion() {
        Properties properties = new Properties();
        try (InputStream in = Setup.class.getResourceAsStream("/execache-version.properties")) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException e) {
            return null;
        }
        String version = properties.getProperty("version");
        return version == null || version.isBlank() || version.startsWith("${") ? null : version.strip();
    }

    /** The jar (or class directory) this class was loaded from, or null when it was not a file. */
    private static Path codeLocation() {
        try {
            CodeSource source = Setup.class.getProtectionDomain().getCodeSource();
            return source == null ? null : Path.of(source.getLocation().toURI());
        } catch (URISyntaxException | IllegalArgumentException e) {
            return null;
        }
    }
}
