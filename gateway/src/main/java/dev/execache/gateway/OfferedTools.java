package dev.execache.gateway;

import dev.execache.core.spi.CatalogTool;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;

/**
 * The gateway's tools as serve offers them: each under the name it is offered by ({@code SERVER__TOOL}, or its own
 * name for a server offered without the prefix when that name is free), and the changes of what is offered, told
 * to serve as tools to add or replace and names to withdraw.
 */
final class OfferedTools {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    /** The fields of a tool's definition that the SDK's tool type knows; others ({@code execution}, say) it drops. */
    private static final Set<String> TOOL_FIELDS = Set.of("name", "title", "description", "inputSchema", "outputSchema",
            "annotations", "_meta", "icons");

    /** The servers whose tools are offered under their own names (see {@link GatewayPolicy.Server#prefixed}). */
    private final Set<String> unprefixed;
    /** A tool's specification for serve (its handler calls it), given the tool and the name it is offered under. */
    private final BiFunction<CatalogTool, String, OfferedTool> specify;
    /** execache's own tools' names, which no gateway tool is offered under. */
    private Set<String> ownTools = Set.of();
    /** The current tools by catalog name. */
    private Map<String, CatalogTool> current = Map.of();
    /** The tools offered under another name than their catalog name, by catalog name. */
    private Map<String, String> renamed = Map.of();
    /** What serve was last told it offers, by offered name. */
    private Map<String, CatalogTool> offered = Map.of();
    private BiConsumer<List<OfferedTool>, List<String>> sink;

    OfferedTools(Set<String> unprefixed, BiFunction<CatalogTool, String, OfferedTool> specify) {
        this.unprefixed = Set.copyOf(unprefixed);
        this.specify = specify;
    }

    /** The tools now, by catalog name: serve is told what changed, once it listens ({@link #onChange}). */
    synchronized void toolsChanged(Map<String, CatalogTool> now) {
        current = now;
        renamed = renamed(now.values());
        tellChanges();
    }

    /** execache's own tools' names: a tool of a server without the prefix is not offered under one of them. */
    synchronized void ownTools(Set<String> own) {
        ownTools = Set.copyOf(own);
        renamed = renamed(current.values());
    }

    /** The tools to offer now; later changes go to {@link #onChange}. */
    synchronized List<OfferedTool> specifications() {
        offered = offeredNow();
        return offered.entrySet().stream().map(each -> specify.apply(each.getValue(), each.getKey())).toList();
    }

    /** Where to send changes of the offered tools: those to add or replace, and the names to withdraw. */
    synchronized void onChange(BiConsumer<List<OfferedTool>, List<String>> changes) {
        this.sink = changes;
        tellChanges();
    }

    /**
     * A server said its tools changed: serve is told (with nothing to add or withdraw, when its list shows no change),
     * so that the agent hears it as it would directly.
     */
    synchronized void serverSaidChanged() {
        if (sink != null) {
            sink.accept(List.of(), List.of());
        }
    }

    /**
     * The fields of the offered tool's definition, as its server wrote them, that the SDK's tool type drops
     * ({@code execution}, say): tools/list adds them back. Empty for a name that is not a gateway tool's.
     */
    synchronized Map<String, Object> unknownFields(String name) {
        CatalogTool tool = offered.get(name);
        if (tool == null) {
            return Map.of();
        }
        Map<String, Object> unknown = new LinkedHashMap<>();
        tool.definition().forEach((field, value) -> {
            if (!TOOL_FIELDS.contains(field) && value != null) {
                unknown.put(field, value);
            }
        });
        return unknown;
    }

    /** Whether {@code name} is the offered name of a tool of a server behind the gateway. */
    synchronized boolean offers(String name) {
        return offered.containsKey(name);
    }

    /** The gateway tool offered under that name now; null for a name that is not one. */
    synchronized CatalogTool toolOf(String offeredName) {
        CatalogTool told = offered.get(offeredName);
        // what serve was told, else (nothing told yet) what it would be told
        return told != null || !offered.isEmpty() ? told : offeredNow().get(offeredName);
    }

    /** The server of an offered gateway tool; null for a name that is not one. */
    synchronized String serverOf(String offeredName) {
        CatalogTool tool = offered.get(offeredName);
        return tool == null ? null : tool.server();
    }

    private void tellChanges() {
        if (sink == null) {
            return;
        }
        Map<String, CatalogTool> now = offeredNow();
        List<OfferedTool> changed = new ArrayList<>();
        now.forEach((name, tool) -> {
            if (!tool.equals(offered.get(name))) {
                changed.add(specify.apply(tool, name));
            }
        });
        List<String> withdrawn = offered.keySet().stream().filter(name -> !now.containsKey(name)).toList();
        offered = now;
        if (!changed.isEmpty() || !withdrawn.isEmpty()) {
            sink.accept(changed, withdrawn);
        }
    }

    /** The current tools by the name each is offered under. */
    private Map<String, CatalogTool> offeredNow() {
        Map<String, CatalogTool> now = new LinkedHashMap<>();
        current.forEach((name, tool) -> now.put(renamed.getOrDefault(name, name), tool));
        return now;
    }

    /**
     * The name each tool is offered under: {@code SERVER__TOOL}, or its own name for a server offered without the
     * prefix, unless that name is taken (by one of execache's tools, another server's tool, or a tool offered
     * unprefixed already), which is then logged and the tool offered as {@code SERVER__TOOL}.
     */
    private Map<String, String> renamed(Iterable<CatalogTool> tools) {
        Map<String, String> names = new HashMap<>();
        if (unprefixed.isEmpty()) {
            return names;
        }
        Set<String> taken = new HashSet<>(ownTools);
        tools.forEach(tool -> taken.add(tool.name()));
        for (CatalogTool tool : tools) {
            if (!unprefixed.contains(tool.server())) {
                continue;
            }
            String own = tool.serverToolName();
            if (taken.add(own)) {
                names.put(tool.name(), own);
            } else {
                LOG.log(Level.WARNING, "server " + tool.server() + ": its tool " + own + " is offered as " + tool.name()
                        + ", not under its own name: " + (ownTools.contains(own) ? "execache has a tool of that name"
                        : "another tool is offered under that name"));
            }
        }
        return names;
    }
}
