package dev.execache.core;

import dev.execache.core.spi.CacheEntry;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;

/**
 * Cache keys. The {@code v1:} prefix is the key format version: a change of format gets a
 * new prefix, so entries written under an old format are never read.
 *
 * <ul>
 *   <li>execution: {@code v1:<code>_<context>_<tools>}, each part the first 128 bits of the
 *       SHA-256 of the code, the canonical context and the canonical tool versions (with a
 *       digest of the identities of the servers the code may call, when there are any); a run that may read
 *       files gets a fourth part, {@code _<reads>}, for the files it may read;
 *   <li>tool call: {@code v1:<tool>:<args>}, the tool name in clear (so tool entries can be
 *       cleared by glob) and 128 bits of the SHA-256 of its version and canonical args.
 * </ul>
 */
final class CacheKeys {
    static final String PREFIX = "v1:";
    private static final int HEX_CHARS_KEPT = 32;
    private static final HexFormat HEX = HexFormat.of();
    /** One per thread: looking the algorithm up costs as much as hashing a short key. */
    private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(CacheKeys::newSha256);

    private CacheKeys() {
    }

    static String forExecution(String code, String canonicalContext, Map<String, String> toolVersions) {
        return forExecution(code, canonicalContext, toolVersions, "");
    }

    /**
     * @param serversDigest {@link #serversDigest} of the servers the code may call (made once for a
     *     set of servers, not per key); empty for none, which keeps the key a run without servers has
     */
    static String forExecution(String code, String canonicalContext, Map<String, String> toolVersions,
            String serversDigest) {
        String tools = canonicalTools(toolVersions);
        if (!serversDigest.isEmpty()) {
            tools += "\n" + serversDigest;
        }
        return PREFIX + sha256(code) + "_" + sha256(canonicalContext) + "_" + sha256(tools);
    }

    /** A digest of the identity of each server (of their canonical JSON); empty for no servers. */
    static String serversDigest(Map<String, String> identities) {
        return identities.isEmpty() ? "" : sha256(CanonicalJson.write(new TreeMap<>(identities), "servers"));
    }

    static String forToolCall(String tool, String canonicalArgs, String toolVersion) {
        return PREFIX + tool + ":" + sha256((toolVersion == null ? "" : toolVersion) + "\n" + canonicalArgs);
    }

    /** An execution key with the fingerprint of the files the code may read. */
    static String forExecution(String code, String canonicalContext, Map<String, String> toolVersions,
            String serversDigest, String readFingerprint) {
        return forExecution(code, canonicalContext, toolVersions, serversDigest) + "_" + readFingerprint;
    }

    /** Whether {@code entry} is a tool's answer under the default key format (not a run of code). */
    static boolean isToolCall(CacheEntry entry) {
        Map<String, String> tools = entry.dependsOnTools();
        return tools.size() == 1 && entry.key().startsWith(PREFIX + tools.keySet().iterator().next() + ":");
    }

    /** The key glob that matches every tool-call key of the tools that {@code toolGlob} matches. */
    static String toolCallPattern(String toolGlob) {
        return PREFIX + toolGlob + ":*";
    }

    static String canonicalTools(Map<String, String> toolVersions) {
        return CanonicalJson.write(new TreeMap<>(toolVersions), "tools");
    }

    static String sha256(String text) {
        // digest() resets it for the thread's next key
        byte[] digest = SHA_256.get().digest(text.getBytes(StandardCharsets.UTF_8));
        return HEX.formatHex(digest, 0, HEX_CHARS_KEPT / 2);
    }

    private static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform must provide SHA-256", e);
        }
    }
}
