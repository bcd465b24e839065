package dev.execache.store.redis;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The fleet's keys for signing entries (HMAC-SHA256): the first signs what this process
 * writes, every one is accepted when reading, so a fleet rotates its key by adding the new
 * one first and keeping the old one after it until every instance writes with the new one.
 * {@link #toString()} never shows a key.
 */
public final class SigningKeys {
    /** Shorter keys are refused: a key is a secret of its own, not a password. */
    public static final int MIN_LENGTH = 16;
    private static final SigningKeys NONE = new SigningKeys(List.of());
    private static final String ALGORITHM = "HmacSHA256";
    /** The signature's format; a new format is a new prefix, and an old one then fails to verify. */
    private static final String FORMAT = "h1.";
    private static final byte[] DOMAIN = "execache entry\0".getBytes(StandardCharsets.UTF_8);

    private final List<SecretKeySpec> keys;

    private SigningKeys(List<SecretKeySpec> keys) {
        this.keys = keys;
    }

    /** No keys: entries are written unsigned and served unchecked. */
    public static SigningKeys none() {
        return NONE;
    }

    /**
     * @param keys the key to sign with first, then older keys still accepted when reading
     * @throws IllegalArgumentException if a key is shorter than {@link #MIN_LENGTH} characters
     *     (the message says which, by position, never the key)
     */
    public static SigningKeys of(List<String> keys) {
        List<SecretKeySpec> specs = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i).strip();
            if (key.length() < MIN_LENGTH) {
                throw new IllegalArgumentException((i == 0 ? "the signing key" : "old signing key " + i) + " has "
                        + key.length() + " characters; use at least " + MIN_LENGTH
                        + " random ones (e.g. the output of: openssl rand -hex 32)");
            }
            specs.add(new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), ALGORITHM));
        }
        return specs.isEmpty() ? NONE : new SigningKeys(List.copyOf(specs));
    }

    public boolean isEmpty() {
        return keys.isEmpty();
    }

    /** How many keys are accepted when reading. */
    public int size() {
        return keys.size();
    }

    /**
     * Tells key sets apart (a process that keeps stores open between commands keeps one per key
     * set) without telling anything about the keys: a truncated digest of them.
     */
    public String id() {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(DOMAIN);
            for (SecretKeySpec key : keys) {
                digest.update(mac(key, List.of("id")));
            }
            return HexFormat.of().formatHex(digest.digest(), 0, 6);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
        }
    }

    /**
     * A key for another use of the fleet's key, derived from the one that signs (an HMAC of the
     * use's name), so that the fleet's key itself serves one purpose only; null without keys.
     */
    public byte[] derive(String use) {
        return keys.isEmpty() ? null : mac(keys.get(0), List.of("derived key", use));
    }

    /** The signature of these fields with the first key; the fields are told apart by their lengths. */
    String sign(List<String> fields) {
        return FORMAT + Base64.getEncoder().withoutPadding().encodeToString(mac(keys.get(0), fields));
    }

    /** Whether one of the keys made {@code signature} over these fields. */
    boolean verifies(List<String> fields, String signature) {
        if (signature == null || !signature.startsWith(FORMAT)) {
            return false;
        }
        byte[] given;
        try {
            given = Base64.getDecoder().decode(signature.substring(FORMAT.length()));
        } catch (IllegalArgumentException e) {
            return false;
        }
        for (SecretKeySpec key : keys) {
            if (MessageDigest.isEqual(mac(key, fields), given)) {
                return true;
            }
        }
        return false;
    }

    private static byte[] mac(SecretKeySpec key, List<String> fields) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            mac.update(DOMAIN);
            ByteBuffer length = ByteBuffer.allocate(Integer.BYTES);
            for (String field : fields) {
                byte[] bytes = field.getBytes(StandardCharsets.UTF_8);
                mac.update(length.clear().putInt(bytes.length).array());
                mac.update(bytes);
            }
            return mac.doFinal();
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }

    @Override
    public String toString() {
        return keys.isEmpty() ? "SigningKeys[none]" : "SigningKeys[" + keys.size() + (keys.size() == 1 ? " key]" : " keys]");
    }
}
