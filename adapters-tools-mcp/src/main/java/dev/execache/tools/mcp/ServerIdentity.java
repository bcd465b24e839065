package dev.execache.tools.mcp;

import dev.execache.core.CanonicalJson;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** The one-way digest that is a downstream server's identity, however the server is reached. */
final class ServerIdentity {
    private ServerIdentity() {
    }

    /**
     * 128 bits (hex) of the canonical JSON of what reaches the server: HMAC-SHA256 with
     * {@code key}, or SHA-256 when there is none.
     */
    static String of(String server, Map<String, Object> reached, byte[] key) {
        byte[] text = CanonicalJson.write(reached, "server " + server).getBytes(StandardCharsets.UTF_8);
        try {
            byte[] digest;
            if (key == null || key.length == 0) {
                digest = MessageDigest.getInstance("SHA-256").digest(text);
            } else {
                Mac mac = Mac.getInstance("HmacSHA256");
                mac.init(new SecretKeySpec(key, "HmacSHA256"));
                digest = mac.doFinal(text);
            }
            return HexFormat.of().formatHex(digest, 0, 16);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every Java platform must provide SHA-256 and HmacSHA256", e);
        }
    }
}
