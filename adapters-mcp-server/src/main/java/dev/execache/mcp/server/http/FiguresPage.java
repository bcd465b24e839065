package dev.execache.mcp.server.http;

import dev.execache.gateway.Json;

import static dev.execache.mcp.server.http.HttpReplies.send;
import static dev.execache.mcp.server.http.HttpReplies.text;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * What the HTTP server shows beside MCP, read-only: the dashboard's files (as they are in the jar,
 * so nothing is built at run time), its data {@code /dashboard.json}, {@code /metrics}, and the
 * OAuth Protected Resource Metadata.
 */
final class FiguresPage {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    static final String METRICS_PATH = "/metrics";
    static final String DASHBOARD_DATA_PATH = "/dashboard.json";
    static final String OPENMETRICS_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    /** The dashboard's files, by path. */
    private static final Map<String, String> PAGES = Map.of(
            "/", "index.html",
            "/index.html", "index.html",
            "/dashboard.css", "dashboard.css",
            "/dashboard.js", "dashboard.js");
    private static final String PAGE_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
            + "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    private final HttpAccess access;
    private final Dashboard dashboard;
    private final Supplier<String> openMetrics;
    private final Map<String, byte[]> pages = new HashMap<>();

    /** @param openMetrics the text {@code /metrics} answers, read when asked; null: no {@code /metrics} */
    FiguresPage(HttpAccess access, Dashboard dashboard, Supplier<String> openMetrics) {
        this.access = access;
        this.dashboard = dashboard;
        this.openMetrics = openMetrics;
        for (String file : new HashSet<>(PAGES.values())) {
            pages.put(file, page(file));
        }
    }

    static boolean isFigures(String path) {
        return METRICS_PATH.equals(path) || DASHBOARD_DATA_PATH.equals(path);
    }

    static boolean isPage(String path) {
        return PAGES.containsKey(path);
    }

    /** The dashboard's files, its data and /metrics: read-only, GET (or HEAD). */
    boolean show(Request request, Response response, Callback callback, String path) {
        boolean figures = isFigures(path);
        if (!"GET".equals(request.getMethod()) && !"HEAD".equals(request.getMethod())) {
            response.getHeaders().put(HttpHeader.ALLOW, "GET, HEAD");
            return text(response, callback, 405, "Method Not Allowed: " + path + " is read with GET\n");
        }
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-store");
        response.getHeaders().put("X-Content-Type-Options", "nosniff");
        response.getHeaders().put("Referrer-Policy", "no-referrer");
        if (!figures) {
            String file = PAGES.get(path);
            response.getHeaders().put("Content-Security-Policy", PAGE_POLICY);
            String type = file.endsWith(".html") ? "text/html; charset=utf-8"
                    : file.endsWith(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8";
            return send(response, callback, 200, type, file.equals("index.html") ? shell() : pages.get(file));
        }
        HttpAccess.Refusal refusal = access.callerOfFigures(request.getHeaders().get(HttpHeader.AUTHORIZATION))
                .refusal();
        if (refusal != null) {
            if (refusal.challenge() != null) {
                response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, refusal.challenge());
            }
            return text(response, callback, refusal.status(), refusal.message() + "\n");
        }
        if (METRICS_PATH.equals(path)) {
            if (openMetrics == null) {
                return text(response, callback, 404, "Not Found: this server has no " + METRICS_PATH + "\n");
            }
            String metrics;
            try {
                metrics = openMetrics.get();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "the figures for " + METRICS_PATH + " could not be read: " + e.getMessage());
                return text(response, callback, 503, "the figures could not be read: " + e.getMessage() + "\n");
            }
            return send(response, callback, 200, OPENMETRICS_TYPE, metrics.getBytes(StandardCharsets.UTF_8));
        }
        String json;
        try {
            json = Json.write(dashboard.json());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "the dashboard's figures could not be read: " + e.getMessage());
            ObjectNode error = Json.MAPPER.createObjectNode();
            error.put("error", "the figures could not be read: " + e.getMessage());
            return send(response, callback, 503, "application/json", Json.write(error).getBytes(StandardCharsets.UTF_8));
        }
        return send(response, callback, 200, "application/json", json.getBytes(StandardCharsets.UTF_8));
    }

    /** RFC 9728's Protected Resource Metadata: public (a client reads it before it has a token), GET. */
    boolean showMetadata(Request request, Response response, Callback callback) {
        if (!"GET".equals(request.getMethod()) && !"HEAD".equals(request.getMethod())) {
            response.getHeaders().put(HttpHeader.ALLOW, "GET, HEAD");
            return text(response, callback, 405, "Method Not Allowed: the metadata is read with GET\n");
        }
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, "max-age=300");
        return send(response, callback, 200, "application/json",
                Json.write(access.metadata()).getBytes(StandardCharsets.UTF_8));
    }

    /** The page, told whether this server asks for a token (so that it asks before it is refused). */
    private byte[] shell() {
        String html = new String(pages.get("index.html"), StandardCharsets.UTF_8);
        return html.replace("data-token-asked=\"\"", "data-token-asked=\"" + access.figuresAskForToken() + "\"")
                .getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] page(String file) {
        try (InputStream in = FiguresPage.class.getResourceAsStream("dashboard/" + file)) {
            if (in == null) {
                throw new IllegalStateException("the dashboard's " + file + " is missing from the jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the dashboard's " + file + " from the jar: " + e.getMessage(), e);
        }
    }
}
