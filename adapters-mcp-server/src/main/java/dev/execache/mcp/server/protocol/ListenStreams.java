package dev.execache.mcp.server.protocol;

import dev.execache.gateway.Gateway;
import dev.execache.gateway.Json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * The 2026-07-28 era's {@code subscriptions/listen} streams, on any transport (an SSE answer over HTTP, lines on
 * stdio): each carries the list changes and resource updates its agent opted in to, each tagged with the listen
 * request's id, after an acknowledgement of what it will get. Log messages are not among them: they go on the stream
 * of the request that asked for them (see {@link StatelessProtocol}).
 */
public final class ListenStreams {
    /** The most subscriptions/listen streams open at once in one instance. */
    public static final int MAX_LISTENS = 1024;
    static final String SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId";
    public static final String TOOLS_CHANGED = "notifications/tools/list_changed";
    static final String RESOURCES_CHANGED = "notifications/resources/list_changed";
    static final String PROMPTS_CHANGED = "notifications/prompts/list_changed";
    public static final String RESOURCE_UPDATED = "notifications/resources/updated";
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");

    private final Gateway gateway;
    private final SubscribedUris subscribed;
    private final List<Listen> listens = new CopyOnWriteArrayList<>();
    /** Set when serve stops: the answer that ends a listen request's stream; guarded by this. */
    private Function<JsonNode, String> closedWith;

    public ListenStreams(Gateway gateway, SubscribedUris subscribed) {
        this.gateway = gateway;
        this.subscribed = subscribed;
    }

    /**
     * A stream and what it asked for. It hears notifications from the moment it is registered, before its
     * acknowledgement is written: those are held and written right after it, so that an agent that has read the
     * acknowledgement misses nothing sent since, and reads nothing before it.
     */
    private static final class Listen {
        private final JsonNode id;
        private final boolean tools;
        private final boolean prompts;
        private final boolean resources;
        private final Set<String> uris;
        private final NotificationStream stream;
        /** Messages heard before the acknowledgement went out; null once it did. Guarded by this. */
        private List<String> held = new ArrayList<>();

        Listen(JsonNode id, boolean tools, boolean prompts, boolean resources, Set<String> uris,
                NotificationStream stream) {
            this.id = id;
            this.tools = tools;
            this.prompts = prompts;
            this.resources = resources;
            this.uris = uris;
            this.stream = stream;
        }

        JsonNode id() {
            return id;
        }

        Set<String> uris() {
            return uris;
        }

        NotificationStream stream() {
            return stream;
        }

        void send(String method, ObjectNode params) {
            ObjectNode tagged = params == null ? Json.MAPPER.createObjectNode() : params.deepCopy();
            ObjectNode meta = tagged.get("_meta") instanceof ObjectNode given ? given : tagged.putObject("_meta");
            meta.set(SUBSCRIPTION_ID_META, id);
            String message = message(method, tagged);
            synchronized (this) {
                if (held != null) {
                    held.add(message);
                    return;
                }
            }
            stream.send(message);
        }

        /** Writes the acknowledgement, then what was heard while it was being made. */
        synchronized void acknowledge(String acknowledgement) {
            stream.send(acknowledgement);
            held.forEach(stream::send);
            held = null;
        }
    }

    /**
     * Opens a stream for the listen request {@code id}: subscribes to the resources {@code filter} names at their
     * servers (a URI no server lists, or whose server refuses, is left out), sends the acknowledgement of what of
     * {@code filter} it will get as the stream's first message, then the notifications; false (and nothing done) when
     * {@value #MAX_LISTENS} are open already.
     */
    public boolean listen(JsonNode id, ObjectNode filter, NotificationStream stream) {
        if (listens.size() >= MAX_LISTENS) {
            return false;
        }
        Set<String> offered = gateway.features().offered();
        ObjectNode honoured = Json.MAPPER.createObjectNode();
        boolean tools = filter.path("toolsListChanged").asBoolean(false);
        boolean prompts = filter.path("promptsListChanged").asBoolean(false) && offered.contains("prompts");
        boolean resources = filter.path("resourcesListChanged").asBoolean(false) && offered.contains("resources");
        if (tools) {
            honoured.put("toolsListChanged", true);
        }
        if (prompts) {
            honoured.put("promptsListChanged", true);
        }
        if (resources) {
            honoured.put("resourcesListChanged", true);
        }
        Set<String> uris = new LinkedHashSet<>();
        for (JsonNode uri : filter.path("resourceSubscriptions")) {
            try {
                subscribed.hold(uri.textValue());
                uris.add(uri.textValue());
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.INFO, "a subscriptions/listen stream asked for " + uri.textValue()
                        + ", which is left out: " + e.getMessage());
            }
        }
        if (filter.has("resourceSubscriptions")) {
            ArrayNode kept = honoured.putArray("resourceSubscriptions");
            uris.forEach(kept::add);
        }
        Listen listen = new Listen(id, tools, prompts, resources, Set.copyOf(uris), stream);
        ObjectNode acknowledged = Json.MAPPER.createObjectNode();
        acknowledged.set("notifications", honoured);
        acknowledged.putObject("_meta").set(SUBSCRIPTION_ID_META, id);
        Function<JsonNode, String> closing;
        synchronized (this) {
            closing = closedWith;
            if (closing == null) {
                // registered before it is acknowledged: what a server sends once the agent has the acknowledgement
                // reaches it (a notification in between is held, see Listen)
                listens.add(listen);
            }
        }
        listen.acknowledge(message("notifications/subscriptions/acknowledged", acknowledged));
        if (closing == null && stream.isOpen()) {
            return true;
        }
        if (closing != null) {
            // serve stopped while the stream was being opened: it ends as the others did
            stream.end(closing.apply(id));
            return true;
        }
        // the stream ended while it was being opened (its agent went away)
        if (listens.remove(listen)) {
            uris.forEach(subscribed::release);
        }
        return true;
    }

    /** A stream ended: its subscriptions that nobody else holds end too. */
    public void ended(NotificationStream stream) {
        for (Listen listen : listens) {
            if (listen.stream() == stream && listens.remove(listen)) {
                listen.uris().forEach(subscribed::release);
            }
        }
    }

    /** The offered tools changed. */
    public void toolsChanged() {
        for (Listen listen : listens) {
            if (listen.tools) {
                listen.send(TOOLS_CHANGED, null);
            }
        }
    }

    /** A server's notification the agent hears as it was sent: to the streams that asked for its kind. */
    public void notified(String method, ObjectNode params) {
        for (Listen listen : listens) {
            boolean wanted = switch (method) {
                case RESOURCE_UPDATED -> listen.uris().contains(params.path("uri").textValue());
                case RESOURCES_CHANGED -> listen.resources;
                case PROMPTS_CHANGED -> listen.prompts;
                // the 2026-07-28 era has no other such notification on a listen stream
                default -> false;
            };
            if (wanted) {
                listen.send(method, params);
            }
        }
    }

    /** Writes to every open stream that needs it, so that a client gone is noticed. */
    public void keepAlive() {
        listens.forEach(listen -> listen.stream().keepAlive());
    }

    /**
     * Ends every stream with its answer, {@code listenResult} of its request's id (null for none): serve is
     * stopping (the subscription ended, not the connection lost), or its agent is gone. The servers are not told: they
     * stop too, or the process does.
     */
    public void close(Function<JsonNode, String> listenResult) {
        synchronized (this) {
            closedWith = listenResult;
        }
        for (Listen listen : listens) {
            if (listens.remove(listen)) {
                listen.stream().end(listenResult.apply(listen.id()));
            }
        }
    }

    /** The answer to the listen request {@code id} that ends its stream gracefully: an empty result. */
    public static String endedAnswer(JsonNode id) {
        ObjectNode result = Json.MAPPER.createObjectNode();
        ObjectNode meta = result.putObject("_meta");
        meta.set(SUBSCRIPTION_ID_META, id);
        meta.putObject(JsonRpc.SERVER_INFO_META).put("name", "execache");
        result.put("resultType", "complete");
        return JsonRpc.response(id, Json.write(result));
    }

    public static String message(String method, ObjectNode params) {
        ObjectNode notification = Json.MAPPER.createObjectNode();
        notification.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        notification.put("method", method);
        if (params != null) {
            notification.set("params", params);
        }
        return Json.write(notification);
    }
}
