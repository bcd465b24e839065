package dev.execache.gateway;

import dev.execache.core.ToolResult;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.ToolCatalog;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * The catalog, with the first call of one tool held after its server answered it, until the
 * test lets it go: a read in flight, made deterministic.
 */
final class HeldCatalog implements ToolCatalog {
    private final ToolCatalog real;
    private final String held;
    final CountDownLatch answered = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    private volatile boolean holding = true;

    HeldCatalog(ToolCatalog real, String held) {
        this.real = real;
        this.held = held;
    }

    /** The catalog itself, which holds nothing: another fleet member reaching the same server. */
    ToolCatalog real() {
        return real;
    }

    @Override
    public ToolResult call(String tool, Map<String, Object> args) {
        ToolResult result = real.call(tool, args);
        if (holding && tool.equals(held)) {
            holding = false;
            answered.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return result;
    }

    @Override
    public List<CatalogTool> tools() {
        return real.tools();
    }

    @Override
    public Map<String, String> identities() {
        return real.identities();
    }

    @Override
    public void addListener(Listener listener) {
        real.addListener(listener);
    }

    @Override
    public void close() {
        real.close();
    }
}

