package dev.execache.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BigIntegerNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.databind.util.RawValue;
import dev.execache.core.CacheStats;
import dev.execache.core.ExecutionError;
import dev.execache.core.ExecutionOutcome;
import dev.execache.core.KeptOut;
import dev.execache.core.ToolCallRecord;
import dev.execache.core.ToolStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Outcomes, errors and figures as JSON, one way for every face: {@code serve}'s answers and the
 * command line's {@code --json} print the same fields from here.
 */
public final class Json {
    public static final ObjectMapper MAPPER = JsonMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    private Json() {
    }

    /**
     * A result as the sandbox produced it, written out verbatim: never parsed, so every nesting
     * depth and every escape (a lone surrogate stays {@code \\ud800}) reaches the reader as it was,
     * identically through {@code run --json} and {@code serve}. The sandbox checked it is MAPPER.
     */
    public static JsonNode rawJson(String json) {
        return MAPPER.getNodeFactory().rawValueNode(new RawValue(json));
    }

    public static ObjectNode error(ExecutionError error) {
        ObjectNode node = MAPPER.createObjectNode();
        node.put("type", error.type().displayName());
        node.put("message", error.message());
        node.put("stack", error.stack());
        if (error.line() > 0) {
            node.put("line", error.line());
            node.put("column", error.column());
        }
        return node;
    }

    public static ObjectNode stats(CacheStats stats) {
        ObjectNode node = MAPPER.createObjectNode();
        node.put("calls", stats.calls());
        node.put("hits", stats.hits());
        node.put("misses", stats.misses());
        node.put("shared", stats.shared());
        node.put("revalidated", stats.revalidations());
        node.put("revalidationSavedMs", millis(stats.revalidationSaved()));
        node.put("revalidationsChanged", stats.revalidationsChanged());
        node.put("hitRate", stats.hitRate());
        node.put("totalSavedMs", millis(stats.totalSaved()));
        node.put("averageSavedMs", millis(stats.averageSaved()));
        node.put("entries", stats.entries());
        node.put("evictions", stats.evictions());
        node.put("expirations", stats.expirations());
        node.put("invalidations", stats.invalidations());
        ObjectNode byCause = node.putObject("removalsByCause");
        stats.removalsByCause().forEach(byCause::put);
        node.put("storeErrors", stats.storeErrors());
        node.put("damaged", stats.damaged());
        node.put("estimatedBytes", stats.estimatedBytes());
        node.put("failed", stats.failed());
        node.put("bypassed", stats.bypassed());
        ObjectNode uncacheable = node.putObject("uncacheable");
        stats.uncacheable().forEach(uncacheable::put);
        if (stats.countingSince() == null) {
            node.putNull("countingSince");
        } else {
            node.put("countingSince", stats.countingSince().toString());
        }
        node.put("toolAnswerBytes", stats.toolAnswerBytes());
        node.put("keptOutBytes", stats.keptOutBytes());
        node.put("keptOutTokens", stats.keptOutTokens());
        ObjectNode tools = node.putObject("tools");
        stats.tools().forEach((tool, counted) -> {
            ObjectNode one = tools.putObject(tool);
            one.put("calls", counted.calls());
            one.put("hits", counted.hits());
            one.put("misses", counted.misses());
            one.put("hitRate", counted.hitRate());
            one.put("savedMs", millis(counted.saved()));
            one.put("invalidations", counted.invalidations());
            one.put("shared", counted.shared());
            one.put("failed", counted.failed());
            one.put("uncacheable", counted.uncacheable());
            one.put("bypassed", counted.bypassed());
            one.put("toolAnswerBytes", counted.toolAnswerBytes());
        });
        ObjectNode agents = node.putObject("agents");
        stats.agents().forEach((agent, counted) -> agents.set(agent, agent(counted)));
        return node;
    }

    /** One agent's figures, as {@code cache_stats} and {@code stats --by agent --format json} give them. */
    public static ObjectNode agent(ToolStats counted) {
        ObjectNode one = MAPPER.createObjectNode();
        one.put("hits", counted.hits());
        one.put("misses", counted.misses());
        one.put("hitRate", counted.hitRate());
        one.put("savedMs", millis(counted.saved()));
        one.put("shared", counted.shared());
        one.put("failed", counted.failed());
        one.put("uncacheable", counted.uncacheable());
        one.put("bypassed", counted.bypassed());
        one.put("toolAnswerBytes", counted.toolAnswerBytes());
        one.put("keptOutBytes", counted.keptOutBytes());
        one.put("keptOutTokens", counted.keptOutTokens());
        return one;
    }

    public static double millis(Duration duration) {
        return Math.round(duration.toNanos() / 1e4) / 100.0;
    }

    public static String write(JsonNode node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * What a run did besides its result: the tool calls it made (tool, cache status, ms), why it
     * was not stored, the sources of non-determinism its code used, and, for a run that consumed
     * tool answers, what it kept out of the agent's context.
     */
    public static void runDetails(ObjectNode node, ExecutionOutcome outcome) {
        ArrayNode calls = node.putArray("toolCalls");
        for (ToolCallRecord call : outcome.toolCalls()) {
            ObjectNode one = calls.addObject();
            one.put("tool", call.tool());
            one.put("cache", call.status().name().toLowerCase(Locale.ROOT));
            one.put("ms", millis(call.time()));
            one.put("error", call.error());
            if (call.cancelled() != null) {
                one.put("cancelled", call.cancelled() == ToolCallRecord.Cancelled.NOT_APPLIED
                        ? "not applied" : "possibly applied");
            }
        }
        node.put("notStored", outcome.notStoredBecause());
        ArrayNode sources = node.putArray("nondeterminism");
        outcome.result().nondeterminism().forEach(sources::add);
        KeptOut keptOut = outcome.keptOut();
        if (keptOut.toolAnswerBytes() > 0) {
            ObjectNode kept = node.putObject("contextKeptOut");
            kept.put("toolAnswerBytes", keptOut.toolAnswerBytes());
            kept.put("resultBytes", keptOut.resultBytes());
            kept.put("bytes", keptOut.bytes());
            kept.put("estimatedTokens", keptOut.estimatedTokens());
            ObjectNode byTool = kept.putObject("toolAnswerBytesByTool");
            keptOut.toolAnswerBytesByTool().forEach(byTool::put);
        }
    }

    /**
     * An object node as plain values, equal to what {@code convertValue(node, Map<String, Object>)}
     * of a default mapper gives (objects as {@link LinkedHashMap}, arrays as {@link ArrayList},
     * integers as the smallest of Integer, Long, BigInteger that the node holds, other numbers as
     * Double), without writing the tree out and reading it back; a node of another kind (a decimal, a
     * float, binary) is converted by {@code fallback}.
     */
    public static Map<String, Object> plain(ObjectNode node, Function<JsonNode, Object> fallback) {
        Map<String, Object> map = new LinkedHashMap<>(Math.max(4, (int) (node.size() / 0.75f) + 1));
        for (Iterator<Map.Entry<String, JsonNode>> fields = node.fields(); fields.hasNext();) {
            Map.Entry<String, JsonNode> field = fields.next();
            map.put(field.getKey(), plainValue(field.getValue(), fallback));
        }
        return map;
    }

    private static Object plainValue(JsonNode node, Function<JsonNode, Object> fallback) {
        if (node instanceof ObjectNode object) {
            return plain(object, fallback);
        }
        if (node instanceof ArrayNode array) {
            List<Object> list = new ArrayList<>(array.size());
            array.forEach(item -> list.add(plainValue(item, fallback)));
            return list;
        }
        if (node instanceof TextNode) {
            return node.textValue();
        }
        if (node instanceof BooleanNode) {
            return node.booleanValue();
        }
        if (node instanceof IntNode || node instanceof LongNode || node instanceof BigIntegerNode || node instanceof DoubleNode) {
            return node.numberValue();
        }
        if (node instanceof NullNode) {
            return null;
        }
        return fallback.apply(node);
    }

    /** How a message names the JSON type of a value a person gave. */
    public static String jsonType(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof String) {
            return "a string";
        }
        if (value instanceof Number) {
            return "a number";
        }
        if (value instanceof Boolean) {
            return "a boolean";
        }
        if (value instanceof List) {
            return "an array";
        }
        return "an object";
    }
}
