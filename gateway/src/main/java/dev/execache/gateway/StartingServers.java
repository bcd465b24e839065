package dev.execache.gateway;

import dev.execache.core.spi.ToolCatalog;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;

/**
 * Waiting for the servers behind the gateway that are still starting ({@code serve} answers before they are up):
 * each wait lasts at most as long as the server's start may take, and what a server brought is offered at once,
 * not when the catalog's notice of it arrives.
 */
final class StartingServers {
    private final ToolCatalog catalog;
    /** The servers code may call ({@code code_access}). */
    private final Set<String> codeAccess;
    /** Offers the catalog's tools now. */
    private final Runnable offerNow;

    StartingServers(ToolCatalog catalog, Set<String> codeAccess, Runnable offerNow) {
        this.catalog = catalog;
        this.codeAccess = Set.copyOf(codeAccess);
        this.offerNow = offerNow;
    }

    /** Whether a server is still starting (its tools are not offered yet). */
    boolean any() {
        return catalog.servers().stream().anyMatch(StartingServers::isStarting);
    }

    /**
     * Waits for the server a tool's name {@code SERVER__TOOL} names while it is starting, and offers what it
     * brought; returns false, at once, for a name that names no server.
     */
    boolean awaitServerOf(String toolName) throws InterruptedException {
        int separator = toolName.indexOf("__");
        if (separator <= 0) {
            return false;
        }
        catalog.awaitStart(toolName.substring(0, separator));
        offerNow.run();
        return true;
    }

    /** Waits for every server that is still starting and offers what they brought. */
    void awaitAll() throws InterruptedException {
        for (ToolCatalog.ServerStatus server : catalog.servers()) {
            if (isStarting(server)) {
                catalog.awaitStart(server.name());
            }
        }
        offerNow.run();
    }

    /**
     * As {@link #awaitAll}, but returns by {@code deadline} at the latest: the servers go on starting after it, and
     * what they bring is offered when they are up.
     */
    void awaitAllUntil(Instant deadline) throws InterruptedException {
        awaitUntil(deadline, this::awaitAll);
    }

    /**
     * Waits until every server still starting has answered {@code initialize} (said its instructions), returning by
     * {@code deadline} at the latest; their tools come after, offered as each server is up.
     */
    void awaitIntroductionsUntil(Instant deadline) throws InterruptedException {
        awaitUntil(deadline, () -> {
            for (ToolCatalog.ServerStatus server : catalog.servers()) {
                if (isStarting(server)) {
                    catalog.awaitIntroduction(server.name());
                }
            }
        });
    }

    private interface Wait {
        void await() throws InterruptedException;
    }

    private void awaitUntil(Instant deadline, Wait wait) throws InterruptedException {
        Instant now = Instant.now();
        if (!deadline.isAfter(now) || !any()) {
            return;
        }
        long left = Math.max(1, Duration.between(now, deadline).toMillis());
        Thread waiting = new Thread(() -> {
            try {
                wait.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "execache-servers-wait");
        waiting.setDaemon(true);
        waiting.start();
        waiting.join(left);
    }

    /**
     * Before a run: waits for each server that code may call and that is still starting, when the code names it;
     * so that {@code tools.SERVER.TOOL()} in code sent right after serve started finds the server's tools. (The
     * runner knows only the tools offered when it starts, and the code is not parsed here: a name that appears in
     * it is enough, and a server it does not name is not waited for.)
     */
    void awaitNamedIn(String code) throws InterruptedException {
        boolean waited = false;
        for (ToolCatalog.ServerStatus server : catalog.servers()) {
            if (isStarting(server) && codeAccess.contains(server.name()) && code.contains(server.name())) {
                catalog.awaitStart(server.name());
                waited = true;
            }
        }
        if (waited) {
            offerNow.run();
        }
    }

    private static boolean isStarting(ToolCatalog.ServerStatus server) {
        return server.state() == ToolCatalog.ServerStatus.State.STARTING;
    }
}
