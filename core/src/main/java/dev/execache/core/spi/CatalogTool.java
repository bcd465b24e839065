package dev.execache.core.spi;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One discovered tool.
 *
 * @param name the name it is offered and cached under ({@code SERVER__TOOL})
 * @param server the name of the server it comes from
 * @param version a digest of what defines it; a new digest means a changed tool
 * @param definition the tool as its server describes it (title, description, input and output
 *     schemas, annotations), as JSON-like values, with the server's own name for the tool
 * @param readOnlyHint what the server's annotations say, null when they say nothing
 * @param annotationsTrusted whether the server's annotations may decide what is cached
 */
public record CatalogTool(String name, String server, String version, Map<String, Object> definition,
        Boolean readOnlyHint, boolean annotationsTrusted) {
    public CatalogTool {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("name must not be blank");
        }
        if (server == null || server.isBlank()) {
            throw new IllegalArgumentException("server must not be blank (tool " + name + ")");
        }
        if (version == null || version.isBlank()) {
            throw new IllegalArgumentException("version must not be blank (tool " + name + ")");
        }
        Objects.requireNonNull(definition, "definition must not be null (tool " + name + ")");
        definition = Collections.unmodifiableMap(new LinkedHashMap<>(definition));
    }

    /** The tool's own name on its server. */
    public String serverToolName() {
        Object own = definition.get("name");
        return own instanceof String text ? text : name.substring(name.indexOf("__") + 2);
    }
}
