package dev.execache.mcp.server.http;

import dev.execache.gateway.Gateway;
import dev.execache.mcp.server.protocol.JsonRpc;
import dev.execache.mcp.server.protocol.ListenStreams;
import dev.execache.mcp.server.protocol.NotificationStream;
import dev.execache.mcp.server.protocol.OwnLog;
import dev.execache.mcp.server.protocol.SubscribedUris;

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
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * What the servers behind the gateway send outside a call's answer, delivered to agents over HTTP:
 * log messages, list changes and resource updates.
 *
 * <p>In the 2025-11-25 era on a session: {@code initialize} opens one ({@code Mcp-Session-Id}), the
 * agent's GET stream carries its notifications, {@code logging/setLevel} and {@code resources/subscribe}
 * are kept per session. A session is only what this instance knows of an id: an id it does not know
 * (another instance of a fleet began it, or it expired) is taken as a new session of the same caller,
 * so that any instance still answers any request; but an id whose agent ended it here is answered 404, as the spec
 * asks of a terminated session. Sessions are few and cheap: at most {@value
 * #MAX_SESSIONS} (the least recently used goes first), and one unused for {@link #IDLE_LIMIT} with
 * no stream open ends. While a session has no stream open its notifications wait for one, at most
 * {@value SseNotificationStream#MAX_QUEUED} of them.
 *
 * <p>In the 2026-07-28 era on {@code subscriptions/listen} streams, which carry the list changes and
 * resource updates the agent opted in to, each tagged with the listen request's id; log messages go
 * on the stream of the request that asked for them (see {@link dev.execache.mcp.server.protocol.StatelessProtocol}).
 */
final class HttpNotifications implements AutoCloseable {
    static final int MAX_SESSIONS = 1024;
    static final int MAX_ENDED = 64 * 1024;
    static final Duration IDLE_LIMIT = Duration.ofMinutes(30);
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");

    private final Gateway gateway;
    private final LongSupplier nanoTime;
    private final SecureRandom random = new SecureRandom();
    /** By id, least recently used first; guarded by this. */
    private final LinkedHashMap<String, Session> sessions = new LinkedHashMap<>(16, 0.75f, true);
    /**
     * The ids of the sessions their agents ended here, the latest {@value #MAX_ENDED} (ids are random: one is never
     * given again); guarded by this. A request naming one is not taken as a new session: the spec's 404.
     */
    private final LinkedHashMap<String, Boolean> ended = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > MAX_ENDED;
        }
    };
    private final SubscribedUris subscribed;
    private final ListenStreams listens;
    private boolean closed;
    private final ScheduledExecutorService heartbeat = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "execache-http-notifications");
        thread.setDaemon(true);
        return thread;
    });

    /** What execache logs goes to the 2025 sessions too, at each session's level, as on stdio. */
    private final Handler ownLog = new Handler() {
        @Override
        public void publish(LogRecord record) {
            logged(OwnLog.params(record));
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    /** @param every how often open streams are written to and sessions unused too long ended */
    HttpNotifications(Gateway gateway, LongSupplier nanoTime, Duration every) {
        this.gateway = gateway;
        this.nanoTime = nanoTime;
        this.subscribed = new SubscribedUris(gateway);
        this.listens = new ListenStreams(gateway, subscribed);
        gateway.onLog(this::logged);
        gateway.onNotification(this::notified);
        Logger.getLogger("dev.execache").addHandler(ownLog);
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
                    if (waiting.size() >= SseNotificationStream.MAX_QUEUED) {
                        waiting.poll();
                    }
                    waiting.add(json);
                    return;
                }
            }
            open.send(json);
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
            ended.put(id, Boolean.TRUE);
        }
        ended(session);
        return true;
    }

    /** Whether the agent of session {@code id} ended it here (DELETE). */
    synchronized boolean wasEnded(String id) {
        return ended.containsKey(id);
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
        uris.forEach(subscribed::release);
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
        subscribed.hold(uri);
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
            subscribed.release(uri);
        }
    }

    /** The 2026-07-28 era's subscriptions/listen streams. */
    ListenStreams listens() {
        return listens;
    }

    /** The offered tools changed. */
    void toolsChanged() {
        everySession(message(ListenStreams.TOOLS_CHANGED, null));
        listens.toolsChanged();
    }

    private void notified(String method, ObjectNode params) {
        if (ListenStreams.RESOURCE_UPDATED.equals(method)) {
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
        } else {
            everySession(message(method, params));
        }
        listens.notified(method, params);
    }

    /** A server's log message, or execache's own: to each session whose level lets it through. */
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
        listens.keepAlive();
    }

    /** How many sessions this instance keeps. */
    synchronized int sessions() {
        return sessions.size();
    }

    private static String message(String method, ObjectNode params) {
        return ListenStreams.message(method, params);
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
        Logger.getLogger("dev.execache").removeHandler(ownLog);
        all.forEach(this::ended);
        listens.close(listenResult);
        heartbeat.shutdownNow();
    }

    @Override
    public void close() {
        close(id -> null);
    }
}
