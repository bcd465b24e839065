package dev.execache.sandbox;

import dev.execache.core.CanonicalJson;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The import map every runner starts with, so that code run outside the runner's main realm is
 * seen: there the runner's watch on Date.now and friends does not reach. Importing
 * {@code node:vm} or {@code node:worker_threads} (statically or not) evaluates a stand-in module
 * that marks the run and re-exports the real one; {@code node:module} and {@code node:process}
 * get stand-ins that watch their ways to other built-in modules ({@code require},
 * {@code getBuiltinModule}). The web {@code Worker} is watched in runner.js itself.
 *
 * <p>The stand-ins reach the runner through the global {@link #HOOK}, which runner.js defines
 * before the code runs as a property the code can neither change nor remove.
 */
final class OtherRealms {
    /** The global the stand-ins call; runner.js's REALMS_HOOK (a test checks they agree). */
    static final String HOOK = "__execache_realms";

    /** The built-in modules whose import alone marks the run, by the name the run is marked with. */
    static final Map<String, String> MARKING = Map.of("node:vm", "node:vm", "node:worker_threads", "node:worker_threads");

    /** The import map as a data: URL, for {@code --import-map}. */
    static final String IMPORT_MAP = importMap();

    private OtherRealms() {
    }

    private static String importMap() {
        Map<String, String> standIns = new TreeMap<>();
        for (String module : MARKING.keySet()) {
            standIns.put(module, HOOK + ".mark(\"" + MARKING.get(module) + "\");\n"
                    + "export * from \"" + module + "\";\n"
                    + "export { default } from \"" + module + "\";\n");
        }
        standIns.put("node:module", "import Module from \"node:module\";\n"
                + HOOK + ".watchModule(Module);\n"
                + "export * from \"node:module\";\n"
                + "export default Module;\n");
        standIns.put("node:process", "import process from \"node:process\";\n"
                + HOOK + ".watchProcess(process);\n"
                + "export * from \"node:process\";\n"
                + "export default process;\n"
                + "export const getBuiltinModule = process.getBuiltinModule;\n");
        Map<String, String> imports = new LinkedHashMap<>();
        Map<String, Map<String, String>> scopes = new LinkedHashMap<>();
        for (Map.Entry<String, String> standIn : standIns.entrySet()) {
            String url = "data:text/javascript;base64,"
                    + Base64.getEncoder().encodeToString(standIn.getValue().getBytes(StandardCharsets.UTF_8));
            imports.put(standIn.getKey(), url);
            // inside its stand-in, the module's name means the real module
            scopes.put(url, Map.of(standIn.getKey(), standIn.getKey()));
        }
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("imports", imports);
        map.put("scopes", scopes);
        String json = CanonicalJson.write(map, "import map");
        return "data:application/json;base64," + Base64.getEncoder().encodeToString(json.getBytes(StandardCharsets.UTF_8));
    }
}
