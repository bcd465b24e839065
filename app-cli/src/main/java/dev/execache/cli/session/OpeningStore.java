package dev.execache.cli.session;

import dev.execache.core.spi.CacheStore;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * A store opened once its process has answered its host ({@link #openInBackground}), or by the first call that needs
 * it, whichever comes first; every call waits for it. {@code serve} answers {@code initialize} without its store:
 * opening SQLite (its native library, Jdbi) took a quarter of serve's start. The opener degrades to no cache as
 * every store does ({@link ReopeningStore}); what it throws fails each call, which runs uncached.
 */
public final class OpeningStore extends DelegatingStore {
    private final Supplier<CacheStore> opener;
    private final CompletableFuture<CacheStore> opened = new CompletableFuture<>();
    private boolean started;

    public OpeningStore(Supplier<CacheStore> opener) {
        this.opener = opener;
    }

    /** Opens the store on a thread of its own, unless a call or {@link #close} came first. */
    public void openInBackground() {
        if (!start()) {
            return;
        }
        Thread thread = new Thread(this::open, "execache-store-open");
        thread.setDaemon(true);
        thread.start();
    }

    private synchronized boolean start() {
        boolean first = !started;
        started = true;
        return first;
    }

    private void open() {
        try {
            opened.complete(opener.get());
        } catch (RuntimeException | Error e) {
            opened.completeExceptionally(e);
        }
    }

    @Override
    CacheStore store() {
        if (start()) {
            open();
        }
        try {
            return opened.join();
        } catch (CompletionException e) {
            throw new IllegalStateException(e.getCause().getMessage(), e.getCause());
        }
    }

    /** Closes the store once it is open; one never opened stays closed, and calls after fail. */
    @Override
    public void close() {
        if (start()) {
            opened.completeExceptionally(new IllegalStateException("the cache store is closed"));
            return;
        }
        try {
            opened.join().close();
        } catch (CompletionException e) {
            // it never opened: nothing to close
        }
    }
}
