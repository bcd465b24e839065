package dev.execache.mcp.server.http;

import dev.execache.gateway.Gateway;
import dev.execache.mcp.server.protocol.JsonRpc;
import dev.execache.mcp.server.protocol.ListenStreams;
import dev.execache.mcp.server.protocol.OwnLog;
import dev.execache.mcp.server.protocol.SubscribedUris;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.spi.ServerRefusedException;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.LoggingLevel;
import dev.execache.core.spi.SessionRegistry;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
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
 * are kept per session. Which sessions are open, and whose, the store knows ({@link SessionRegistry}, fleet-wide on
 * a shared store): any instance serves a session another opened, to its caller only, and an id that is not open there
 * (ended, unused past {@link #IDLE_LIMIT}, or never opened) is answered 404, as the spec asks. When the store fails,
 * an instance goes by what it knows itself: its own sessions, and the ids ended here; an id it does not know is then
 * taken as a session of its caller, so that requests are still answered. What an instance keeps of a session (its
 * level, subscriptions and stream) is cheap: at most {@value #MAX_SESSIONS} (the least recently used goes first), and
 * one unused for {@link #IDLE_LIMIT} with no stream open ends. The session's stream and its tool calls' streams can be
 * resumed ({@link ResumableStream}); while a session has no stream open its notifications wait for one, at most
 * {@value ResumableStream#MAX_EVENTS} of them.
 *
 * <p>In the 2026-07-28 era on {@code subscriptions/listen} streams, which carry the list changes and
 * resource updates the agent opted in to, each tagged with the listen request's id; log messages go
 * on the stream of the request that asked for them (see {@link dev.execache.mcp.server.protocol.StatelessProtocol}).
 */
final class HttpNotifications implements AutoCloseable {
    static final int MAX_SESSIONS = 1024;
    static final int MAX_ENDED = 64 * 1024;
    static final Duration IDLE_LIMIT = Duration.ofMinutes(30);
    /** How often an instance tells the store that a session whose stream it holds open is still used. */
    private static final Duration USED_EVERY = Duration.ofMinutes(1);
    /**
     * The finished tool call streams of a session kept for a client to resume, the latest ones: kept even when the
     * answer was written, since a write to a connection that just broke can still succeed.
     */
    static final int MAX_FINISHED_CALLS = 8;
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");

    private final Gateway gateway;
    private final LongSupplier nanoTime;
    private final SecureRandom random = new SecureRandom();
    private final Supplier<SessionRegistry> registry;
    private final AtomicBoolean registryFailing = new AtomicBoolean();
    /** By id, least recently used first; guarded by this. */
    private final LinkedHashMap<String, Session> sessions = new LinkedHashMap<>(16, 0.75f, true);
    /**
     * The ids of the sessions ended here, the latest {@value #MAX_ENDED} (ids are random: one is never given again);
     * guarded by this. What this instance goes by while the store fails.
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
        this.registry = gateway::sessions;
        this.nanoTime = nanoTime;
        this.subscribed = new SubscribedUris(gateway);
        this.listens = new ListenStreams(gateway, subscribed);
        gateway.onLog(this::logged);
        gateway.onNotification(this::notified);
        Logger.getLogger("dev.execache").addHandler(ownLog);
        heartbeat.scheduleWithFixedDelay(this::keepAlive, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** A 2025 session: its caller, the level it asked for, the URIs it subscribed to, its streams. */
    final class Session {
        final String id;
        private final String owner;
        private volatile LoggingLevel level;
        private final Set<String> uris = new LinkedHashSet<>();
        /** Its own stream (the GET), kept for a client to resume. */
        private final ResumableStream own = new ResumableStream(randomId(6));
        /** Its tool calls' streams by id: running, or finished and not yet read whole; insertion order. */
        private final LinkedHashMap<String, CallStream> calls = new LinkedHashMap<>();
        private volatile long usedAt;
        private long toldStoreAt;

        private Session(String id, String owner) {
            this.id = id;
            this.owner = owner;
            this.usedAt = nanoTime.getAsLong();
            this.toldStoreAt = usedAt;
        }

        private void send(String json) {
            own.send(json, false);
        }

        /** Whether its GET stream is open here. */
        private boolean streaming() {
            return own.hasClient();
        }
    }

    /** A tool call's stream in a session, and how to stop the call. */
    record CallStream(ResumableStream events, Runnable cancel) {
    }

    /** What a request naming a session finds: the session, or why there is none (the 404's words). */
    record Found(Session session, String refusal) {
    }

    /** Opens a session for {@code owner} (who asked: a token's name, or null), and gives its id. */
    String open(String owner) {
        String id = randomId(16);
        try {
            registry.get().open(id, digest(owner), IDLE_LIMIT);
            registryAnswered();
        } catch (RuntimeException e) {
            registryFailed(e);
        }
        synchronized (this) {
            add(new Session(id, owner));
        }
        return id;
    }

    private String randomId(int length) {
        byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** Who began a session, as the store keeps it: a digest, so that the store holds no name. */
    private static String digest(String owner) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(
                    (owner == null ? "anyone" : "agent:" + owner).getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java platform", e);
        }
    }

    /**
     * The session of {@code id} for {@code owner}, as the store knows it (this instance's state of it, made when it is
     * new here); when the store fails, as this instance knows it.
     */
    Found session(String id, String owner) {
        Optional<String> open;
        try {
            open = registry.get().use(id, IDLE_LIMIT);
            registryAnswered();
        } catch (RuntimeException e) {
            registryFailed(e);
            open = null;
        }
        Session gone = null;
        Found found;
        synchronized (this) {
            Session session = sessions.get(id);
            if (open != null && open.isEmpty()) {
                if (session != null) {
                    sessions.remove(id);
                    gone = session;
                }
                found = new Found(null, "session " + HttpReplies.printable(id) + (ended.containsKey(id) ? " was ended"
                        : " is not open: it was ended, went unused too long, or never began") + "; send initialize for"
                        + " a new one");
            } else if (open != null && !open.get().equals(digest(owner))
                    || open == null && session != null && !Objects.equals(session.owner, owner)) {
                found = new Found(null, "session " + HttpReplies.printable(id) + " is another caller's");
            } else if (open == null && ended.containsKey(id)) {
                found = new Found(null, "session " + HttpReplies.printable(id) + " was ended; send initialize for a new"
                        + " one");
            } else {
                if (session == null) {
                    session = new Session(id, owner);
                    add(session);
                }
                session.usedAt = nanoTime.getAsLong();
                session.toldStoreAt = session.usedAt;
                found = new Found(session, null);
            }
        }
        if (gone != null) {
            ended(gone);
        }
        return found;
    }

    private void registryAnswered() {
        if (registryFailing.compareAndSet(true, false)) {
            LOG.log(Level.INFO, "the store answers again: sessions are known fleet-wide again");
        }
    }

    private void registryFailed(RuntimeException e) {
        if (registryFailing.compareAndSet(false, true)) {
            LOG.log(Level.WARNING, "the store does not answer for the agents' sessions (" + e.getMessage() + "); until it"
                    + " does, this instance goes by the sessions it knows itself");
        }
    }

    private void add(Session session) {
        if (closed) {
            return;
        }
        List<Session> dropped = new ArrayList<>();
        while (sessions.size() >= MAX_SESSIONS) {
            Iterator<Session> oldest = sessions.values().iterator();
            dropped.add(oldest.next());
            oldest.remove();
        }
        sessions.put(session.id, session);
        // what this instance kept of them goes; they stay open in the store
        dropped.forEach(this::ended);
    }

    /** Ends a session (the agent's DELETE): null when done, else why not (the 404's words). */
    String end(String id, String owner) {
        Found found = session(id, owner);
        if (found.session() == null) {
            return found.refusal();
        }
        try {
            registry.get().end(id);
            registryAnswered();
        } catch (RuntimeException e) {
            registryFailed(e);
        }
        synchronized (this) {
            sessions.remove(id);
            ended.put(id, Boolean.TRUE);
        }
        ended(found.session());
        return null;
    }

    /** What ends with a session here: its stream, its calls no client reads, and its subscriptions nobody else holds. */
    private void ended(Session session) {
        List<String> uris;
        List<CallStream> unread = new ArrayList<>();
        synchronized (session) {
            uris = new ArrayList<>(session.uris);
            session.uris.clear();
            session.calls.values().stream().filter(call -> !call.events().finished() && !call.events().hasClient())
                    .forEach(unread::add);
            session.calls.clear();
        }
        session.own.end();
        unread.forEach(call -> call.cancel().run());
        uris.forEach(subscribed::release);
    }

    /**
     * Gives the session its GET stream, with a priming event and what waited for it, or (resuming, {@code after} the
     * number of the last event its client got) what it missed; false when one is open already and this one does not
     * resume it.
     */
    boolean attach(Session session, SseNotificationStream stream, Long after) {
        ResumableStream.Sink sink = stream::write;
        stream.onGone(() -> {
            // told under the stream's lock at times: no lock of the session's here
            session.own.detach(sink);
            session.usedAt = nanoTime.getAsLong();
        });
        return session.own.attach(sink, after, true, after != null);
    }

    /** The session's stream {@code id} (its own or a call's) still kept here, or null. */
    ResumableStream stream(Session session, String id) {
        synchronized (session) {
            if (session.own.id.equals(id)) {
                return session.own;
            }
            CallStream call = session.calls.get(id);
            return call == null ? null : call.events();
        }
    }

    /** Whether {@code stream} is the session's own (its GET stream). */
    boolean isOwn(Session session, ResumableStream stream) {
        return session.own == stream;
    }

    /** A new stream for a tool call of the session, kept for its client to resume until read whole. */
    ResumableStream callStream(Session session, Runnable cancel) {
        ResumableStream events = new ResumableStream(randomId(6));
        synchronized (session) {
            session.calls.put(events.id, new CallStream(events, cancel));
        }
        return events;
    }

    /** A call's stream ended: kept for its client to resume, the latest {@value #MAX_FINISHED_CALLS} of them. */
    void callEnded(Session session) {
        synchronized (session) {
            long kept = session.calls.values().stream().filter(call -> call.events().finished()).count();
            for (Iterator<CallStream> each = session.calls.values().iterator(); kept > MAX_FINISHED_CALLS && each.hasNext(); ) {
                if (each.next().events().finished()) {
                    each.remove();
                    kept--;
                }
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

    /**
     * Writes to every open stream (so that a client gone is noticed), tells the store of the sessions whose streams are
     * open (so that they stay open fleet-wide; one ended elsewhere ends here too), and ends sessions unused too long.
     */
    private void keepAlive() {
        long now = nanoTime.getAsLong();
        List<Session> expired = new ArrayList<>();
        List<Session> toTell = new ArrayList<>();
        synchronized (this) {
            for (Iterator<Session> each = sessions.values().iterator(); each.hasNext(); ) {
                Session session = each.next();
                if (session.streaming()) {
                    session.usedAt = now;
                    session.own.keepAlive();
                    if (now - session.toldStoreAt > USED_EVERY.toNanos()) {
                        toTell.add(session);
                    }
                } else if (now - session.usedAt > IDLE_LIMIT.toNanos()) {
                    each.remove();
                    expired.add(session);
                }
            }
        }
        expired.forEach(this::ended);
        for (Session session : toTell) {
            Found found = session(session.id, session.owner);
            if (found.session() == null) {
                LOG.log(Level.DEBUG, "a session whose stream was open here ended elsewhere");
            }
        }
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
