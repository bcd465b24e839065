package dev.execache.cli.setup;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.execache.cli.settings.ParseErrors;
import dev.execache.cli.settings.ConfigFile;
import dev.execache.cli.settings.UsageException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The person's execache configuration, to which setup adds servers: appended as text under
 * {@code servers:} (a new section at the end when there is none), so that the rest of the file,
 * comments included, stays as it was.
 */
final class ExecacheConfig {
    static final YAMLMapper YAML = new YAMLMapper(new YAMLFactory()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER));
    private static final Pattern SERVERS_LINE = Pattern.compile("^servers\\s*:\\s*(#.*)?$");
    private static final Pattern SERVERS_EMPTY = Pattern.compile("^servers\\s*:\\s*(\\{\\s*}|null|~)?\\s*(#.*)?$");

    /**
     * One server to add, the comment above it saying where it came from, and the comment lines the person wrote
     * above it there ({@code # ...}), which go with it.
     */
    record Addition(String name, ObjectNode definition, String from, List<String> comments) {
        Addition {
            comments = List.copyOf(comments);
        }
    }

    private ExecacheConfig() {
    }

    /** The servers the file lists, as written (empty for a file without any); an invalid file is an error. */
    static ObjectNode servers(Path path, String text) {
        try {
            ConfigFile.parse(text, path);
        } catch (UsageException e) {
            throw new SetupException(e.getMessage());
        }
        try {
            JsonNode root = YAML.readTree(text);
            JsonNode servers = root == null ? null : root.path("servers");
            return servers != null && servers.isObject() ? (ObjectNode) servers : YAML.createObjectNode();
        } catch (JacksonException e) {
            throw new SetupException(ParseErrors.describe(path, "YAML", text, e));
        }
    }

    static String add(Path path, String text, List<Addition> additions) {
        String newline = text.contains("\r\n") ? "\r\n" : "\n";
        List<String> lines = new ArrayList<>(List.of(text.split("\\r?\\n", -1)));
        if (lines.size() > 1 && lines.get(lines.size() - 1).isEmpty()) {
            lines.remove(lines.size() - 1);
        } else if (lines.size() == 1 && lines.get(0).isEmpty()) {
            lines.clear();
        }
        int serversLine = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("servers") && SERVERS_EMPTY.matcher(lines.get(i)).matches()) {
                serversLine = i;
                break;
            }
            if (lines.get(i).matches("^servers\\s*:.*")) {
                throw new SetupException(path + ": line " + (i + 1) + ": servers: is written on one line; setup adds to a"
                        + " servers: block (one server per indented line), so change it to that form first");
            }
        }
        List<String> block;
        if (serversLine < 0) {
            if (!lines.isEmpty() && !lines.get(lines.size() - 1).isBlank()) {
                lines.add("");
            }
            lines.add("servers:");
            lines.addAll(render(additions, "  "));
        } else {
            if (!SERVERS_LINE.matcher(lines.get(serversLine)).matches()) {
                lines.set(serversLine, "servers:");
            }
            int end = serversLine + 1;
            String indent = null;
            while (end < lines.size()) {
                String line = lines.get(end);
                if (!line.isBlank() && !line.startsWith(" ") && !line.startsWith("\t") && !line.startsWith("#")) {
                    break;
                }
                if (indent == null && !line.isBlank() && !line.strip().startsWith("#")) {
                    indent = line.substring(0, line.length() - line.stripLeading().length());
                }
                end++;
            }
            int last = end - 1;
            while (last > serversLine && (lines.get(last).isBlank() || lines.get(last).startsWith("#"))) {
                last--;
            }
            block = render(additions, indent == null ? "  " : indent);
            lines.addAll(last + 1, block);
        }
        return String.join(newline, lines) + newline;
    }

    /** The additions as lines of a servers: block whose entries are indented by {@code indent}. */
    static List<String> render(List<Addition> additions, String indent) {
        List<String> lines = new ArrayList<>();
        for (Addition addition : additions) {
            ObjectNode one = YAML.createObjectNode();
            one.set(addition.name(), addition.definition());
            String yaml;
            try {
                yaml = YAML.writeValueAsString(one);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            lines.add(indent + "# from " + addition.from());
            addition.comments().forEach(comment -> lines.add(indent + comment));
            for (String line : yaml.split("\n")) {
                if (!line.isEmpty()) {
                    int spaces = line.length() - line.stripLeading().length();
                    // Jackson indents by two; a file that indents by more gets its own step at every level
                    lines.add(indent + indent.repeat(spaces / 2) + line.stripLeading());
                }
            }
        }
        return lines;
    }
}
