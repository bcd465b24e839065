package dev.execache.mcp.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.spi.ServerRefusedException;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.LoggingLevel;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * What the servers behind the gateway send outside a call's answer, delivered to agents over HTTP:
 * log messages, list changes and resource updates.
 *
 * <p>In the 2025-11-25 era on a session: {@code initialize} opens one ({@code Mcp-Session-Id}), the
 * agent's GET stream carries its notifications, {@code logging/setLevel} and {@code resources/subscribe}
 * are kept per session. A session is only what this instance knows of an id: an id it does not know
 * (another instance of a fleet began it, or it expired) is taken as a new session of the same caller,
 * so that any instance still answers any request. Sessions are few and cheap: at most {@value
 * #MAX_SESSIONS} (the least recently used goes first), and one unused for {@link #IDLE_LIMIT} with
 * no stream open ends. While a session has no stream open its notifications wait for one, at most
 * {@value NotificationStream#MAX_QUEUED} of them.
 *
 * <p>In the 2026-07-28 era on {@code subscriptions/listen} streams, which carry the list changes and
 * resource updates the agent opted in to, each tagged with the listen request's id; log messages go
 * on the stream of the request that asked for them (see {@link StatelessProtocol}).
 */
final class HttpNotifications implements AutoCloseable {
    static final int MAX_SESSIONS = 1024;
    /** The most subscriptions/listen streams open at once in one instance. */
    static final int MAX_LISTENS = 1024;
    static final Duration IDLE_LIMIT = Duration.ofMinutes(30);
    static final String SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId";
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    private static final String TOOLS_CHANGED = "notifications/tools/list_changed";
    private static final String RESOURCES_CHANGED = "notifications/resources/list_changed";
    private static final String PROMPTS_CHANGED = "notifications/prompts/list_changed";
    private static final String RESOURCE_UPDATED = "notifications/resources/updated";

    private final Gateway gateway;
    private final LongSupplier nanoTime;
    private final SecureRandom random = new SecureRandom();
    /** By id, least recently used first; guarded by this. */
    private final LinkedHashMap<String, Session> sessions = new LinkedHashMap<>(16, 0.75f, true);
    private final List<Listen> listens = new CopyOnWriteArrayList<>();
    /** How many sessions and listen streams hold each subscribed URI; guarded by this. */
    private final Map<String, Integer> holders = new HashMap<>();
    private boolean closed;
    private final ScheduledExecutorService heartbeat = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "execache-http-notifications");
        thread.setDaemon(true);
        return thread;
    });

    /** @param every how often open streams are written to and sessions unused too long ended */
    HttpNotifications(Gateway gateway, LongSupplier nanoTime, Duration every) {
        this.gateway = gateway;
        this.nanoTime = nanoTime;
        gateway.onLog(this::logged);
        gateway.onNotification(this::notified);
        heartbeat.scheduleWithFixedDelay(this::keepAlive, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** A 2025 session: its caller, the level it asked for, the URIs it subscribed to, its stream. */
    final class Session {
        final String id;
        private final String owner;
        private volatile LoggingLevel level;
        private final Set<String> uris = new LinkedHashSet<>();
        private NotificationStream stream;
        private final ArrayDeque<String> waiting = new ArrayDeque<>();
        private long usedAt;

        private Session(String id, String owner) {
            this.id = id;
            this.owner = owner;
            this.usedAt = nanoTime.getAsLong();
        }

        private void send(String json) {
            NotificationStream open;
            synchronized (this) {
                open = stream;
                if (open == null || !open.isOpen()) {
                    if (waiting.size() >= NotificationStream.MAX_QUEUED) {
                        waiting.poll();
                    }
                    waiting.add(json);
                    return;
                }
            }
            open.send(json);
        }
    }

    /** A 2026-07-28 {@code subscriptions/listen} stream and what it asked for. */
    private record Listen(JsonNode id, boolean tools, boolean prompts, boolean resources, Set<String> uris,
            NotificationStream stream) {
        void send(String method, ObjectNode params) {
            ObjectNode tagged = params == null ? Json.MAPPER.createObjectNode() : params.deepCopy();
            ObjectNode meta = tagged.get("_meta") instanceof ObjectNode given ? given : tagged.putObject("_meta");
            meta.set(SUBSCRIPTION_ID_META, id);
            stream.send(message(method, tagged));
        }
    }

    /** Opens a session for {@code owner} (who asked: a token's name, or null), and gives its id. */
    synchronized String open(String owner) {
        String id = HexFormat.of().formatHex(bytes());
        add(new Session(id, owner));
        return id;
    }

    private byte[] bytes() {
        byte[] bytes = new byte[16];
        random.nextBytes(bytes);
        return bytes;
    }

    /**
     * The session of {@code id}: this instance's, or a new one for an id it does not know (begun by another
     * instance, or expired); null when the session is another caller's.
     */
    synchronized Session session(String id, String owner) {
        Session session = sessions.get(id);
        if (session == null) {
            session = new Session(id, owner);
            add(session);
        } else if (!Objects.equals(session.owner, owner)) {
            return null;
        }
        session.usedAt = nanoTime.getAsLong();
        return session;
    }

    private void add(Session session) {
        if (closed) {
            return;
        }
        while (sessions.size() >= MAX_SESSIONS) {
            Iterator<Session> oldest = sessions.values().iterator();
            Session dropped = oldest.next();
            oldest.remove();
            ended(dropped);
        }
        sessions.put(session.id, session);
    }

    /** Ends a session (the agent's DELETE); false when there is none of that caller's. */
    boolean end(String id, String owner) {
        Session session;
        synchronized (this) {
            session = sessions.get(id);
            if (session == null || !Objects.equals(session.owner, owner)) {
                return false;
            }
            sessions.remove(id);
        }
        ended(session);
        return true;
    }

    /** What ends with a session: its stream, and its subscriptions that nobody else holds. */
    private void ended(Session session) {
        NotificationStream stream;
        List<String> uris;
        synchronized (session) {
            stream = session.stream;
            session.stream = null;
            uris = new ArrayList<>(session.uris);
            session.uris.clear();
        }
        if (stream != null) {
            stream.end(null);
        }
        uris.forEach(this::release);
    }

    /** Gives the session its GET stream, with what waited for it; false when it has one open already. */
    boolean attach(Session session, NotificationStream stream) {
        List<String> waited;
        synchronized (session) {
            if (session.stream != null && session.stream.isOpen()) {
                return false;
            }
            session.stream = stream;
            waited = new ArrayList<>(session.waiting);
            session.waiting.clear();
        }
        waited.forEach(stream::send);
        return true;
    }

    /** The session's GET stream ended. */
    void detach(Session session, NotificationStream stream) {
        synchronized (session) {
            if (session.stream == stream) {
                session.stream = null;
                session.usedAt = nanoTime.getAsLong();
            }
        }
    }

    /** The level a session's agent set: its servers' messages from that level up reach it. */
    void setLevel(Session session, LoggingLevel level) {
        session.level = level;
        gateway.logFrom(level);
    }

    /** A session subscribes to a resource: the URI's server is asked when nobody held it yet. */
    void subscribe(Session session, String uri) {
        synchronized (session) {
            if (session.uris.contains(uri)) {
                return;
            }
        }
        hold(uri);
        synchronized (session) {
            session.uris.add(uri);
        }
    }

    /** A session's subscription ends: the URI's server is told when nobody holds it any more. */
    void unsubscribe(Session session, String uri) {
        boolean held;
        synchronized (session) {
            held = session.uris.remove(uri);
        }
        if (held) {
            release(uri);
        }
    }

    /** Asks the URI's server to subscribe when this is its first holder; a server's refusal is thrown. */
    private void hold(String uri) {
        boolean first;
        synchronized (this) {
            first = holders.merge(uri, 1, Integer::sum) == 1;
        }
        if (first) {
            try {
                gateway.features().answer(McpSchema.METHOD_RESOURCES_SUBSCRIBE, uriParams(uri), null);
            } catch (RuntimeException e) {
                synchronized (this) {
                    holders.computeIfPresent(uri, (key, count) -> count == 1 ? null : count - 1);
                }
                throw e;
            }
        }
    }

    private void release(String uri) {
        boolean last;
        synchronized (this) {
            Integer left = holders.computeIfPresent(uri, (key, count) -> count == 1 ? null : count - 1);
            last = left == null;
        }
        if (last) {
            try {
                gateway.features().answer(McpSchema.METHOD_RESOURCES_UNSUBSCRIBE, uriParams(uri), null);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "unsubscribing from " + uri + ": " + e.getMessage());
            }
        }
    }

    private static ObjectNode uriParams(String uri) {
        ObjectNode params = Json.MAPPER.createObjectNode();
        params.put("uri", uri);
        return params;
    }

    /**
     * A {@code subscriptions/listen} stream: subscribes to the resources it names at their servers (a URI no
     * server lists, or whose server refuses, is left out), sends the acknowledgement of what of {@code filter} it
     * will get as the stream's first message, then the notifications; false (and nothing done) when {@value
     * #MAX_LISTENS} are open already.
     */
    boolean listen(JsonNode id, ObjectNode filter, NotificationStream stream) {
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
                hold(uri.textValue());
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
        stream.send(message("notifications/subscriptions/acknowledged", acknowledged));
        synchronized (this) {
            if (!closed) {
                listens.add(listen);
                return true;
            }
        }
        uris.forEach(this::release);
        stream.end(null);
        return true;
    }

    /** A listen stream ended: its subscriptions that nobody else holds end too. */
    void listenEnded(NotificationStream stream) {
        for (Listen listen : listens) {
            if (listen.stream() == stream && listens.remove(listen)) {
                listen.uris().forEach(this::release);
            }
        }
    }

    /** The offered tools changed. */
    void toolsChanged() {
        everySession(message(TOOLS_CHANGED, null));
        for (Listen listen : listens) {
            if (listen.tools()) {
                listen.send(TOOLS_CHANGED, null);
            }
        }
    }

    private void notified(String method, ObjectNode params) {
        switch (method) {
            case RESOURCE_UPDATED -> {
                String uri = params.path("uri").textValue();
                String message = message(method, params);
                for (Session session : sessionsNow()) {
                    boolean subscribed;
                    synchronized (session) {
                        subscribed = session.uris.contains(uri);
                    }
                    if (subscribed) {
                        session.send(message);
                    }
                }
                for (Listen listen : listens) {
                    if (listen.uris().contains(uri)) {
                        listen.send(method, params);
                    }
                }
            }
            case RESOURCES_CHANGED, PROMPTS_CHANGED -> {
                everySession(message(method, params));
                for (Listen listen : listens) {
                    if (method.equals(RESOURCES_CHANGED) ? listen.resources() : listen.prompts()) {
                        listen.send(method, params);
                    }
                }
            }
            // the 2026-07-28 era has no such notification on a listen stream
            default -> everySession(message(method, params));
        }
    }

    private void logged(ObjectNode message) {
        LoggingLevel level = JsonRpc.level(message.get("level"));
        if (level == null) {
            return;
        }
        String text = message(McpSchema.METHOD_NOTIFICATION_MESSAGE, message);
        for (Session session : sessionsNow()) {
            LoggingLevel asked = session.level;
            if (asked != null && level.level() >= asked.level()) {
                session.send(text);
            }
        }
    }

    private void everySession(String message) {
        sessionsNow().forEach(session -> session.send(message));
    }

    private synchronized List<Session> sessionsNow() {
        return new ArrayList<>(sessions.values());
    }

    /** Writes to every open stream (so that a client gone is noticed) and ends sessions unused too long. */
    private void keepAlive() {
        long now = nanoTime.getAsLong();
        List<Session> expired = new ArrayList<>();
        synchronized (this) {
            for (Iterator<Session> each = sessions.values().iterator(); each.hasNext(); ) {
                Session session = each.next();
                synchronized (session) {
                    if (session.stream != null && session.stream.isOpen()) {
                        session.usedAt = now;
                        session.stream.keepAlive();
                    } else if (now - session.usedAt > IDLE_LIMIT.toNanos()) {
                        each.remove();
                        expired.add(session);
                    }
                }
            }
        }
        expired.forEach(this::ended);
        listens.forEach(listen -> listen.stream().keepAlive());
    }

    /** How many sessions this instance keeps. */
    synchronized int sessions() {
        return sessions.size();
    }

    private static String message(String method, ObjectNode params) {
        ObjectNode notification = Json.MAPPER.createObjectNode();
        notification.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        notification.put("method", method);
        if (params != null) {
            notification.set("params", params);
        }
        return Json.write(notification);
    }

    /**
     * Ends every stream: a session's as it is, a listen stream with its answer (the subscription ended
     * gracefully); {@code listenResult} writes that answer for a listen request's id.
     */
    void close(java.util.function.Function<JsonNode, String> listenResult) {
        List<Session> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(sessions.values());
            sessions.clear();
        }
        all.forEach(this::ended);
        for (Listen listen : listens) {
            listens.remove(listen);
            listen.stream().end(listenResult.apply(listen.id()));
        }
        heartbeat.shutdownNow();
    }

    @Override
    public void close() {
        close(id -> null);
    }
}
