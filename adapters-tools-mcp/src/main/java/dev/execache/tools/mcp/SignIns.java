package dev.execache.tools.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * A person's sign-ins to url servers, one owner-only file (0600, in a directory only its owner can
 * open) per server URL: the refresh token, the access token and when it expires, the client it was
 * got with, and whom it names. Nothing of it goes into a cache, a log or output; what may be shown
 * is {@link State}.
 */
public final class SignIns {
    private static final Set<PosixFilePermission> OWNER_FILE = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> OWNER_DIRECTORY = PosixFilePermissions.fromString("rwx------");
    /** One lock per file in this process; the file lock keeps other processes (a resident server, a command) out. */
    private static final Map<Path, ReentrantLock> LOCKS = new ConcurrentHashMap<>();

    private final Path directory;
    private final Map<Path, Read> lastRead = new ConcurrentHashMap<>();

    private record Read(FileTime modified, SignIn signIn) {
    }

    private SignIns(Path directory) {
        this.directory = Objects.requireNonNull(directory, "directory must not be null");
    }

    /** The sign-ins kept in {@code directory} (made, owner-only, at the first sign-in). */
    public static SignIns in(Path directory) {
        return new SignIns(directory);
    }

    public Path directory() {
        return directory;
    }

    /**
     * What may be shown of a sign-in: whom it names and where, never a token.
     *
     * @param account the subject the sign-in names ({@code sub}), or an id of the sign-in when the tokens do not say
     * @param issuer the authorization server it was made at
     * @param signedInAt when the person signed in
     */
    public record State(String account, URI issuer, Instant signedInAt) {
    }

    /** The sign-in to the server at {@code url}, or null when the person has not signed in to it. */
    public State state(URI url) {
        SignIn signIn = find(url);
        return signIn == null ? null : new State(signIn.account(), signIn.issuer(), signIn.signedInAt());
    }

    /** Forgets the sign-in to the server at {@code url}; returns whether there was one. */
    public boolean forget(URI url) {
        Path file = file(url);
        lastRead.remove(file);
        try {
            return locked(url, () -> {
                try {
                    return Files.deleteIfExists(file);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw new IllegalStateException("cannot remove " + file + ": " + e.getCause().getMessage(), e);
        }
    }

    /** The sign-in kept for {@code url}, read again only when its file changed; null for none. */
    SignIn find(URI url) {
        Path file = file(url);
        FileTime modified;
        try {
            modified = Files.getLastModifiedTime(file);
        } catch (NoSuchFileException e) {
            lastRead.remove(file);
            return null;
        } catch (IOException e) {
            return null;
        }
        Read read = lastRead.get(file);
        if (read != null && read.modified().equals(modified)) {
            return read.signIn();
        }
        SignIn signIn = readFile(file);
        lastRead.put(file, new Read(modified, signIn));
        return signIn;
    }

    private SignIn readFile(Path file) {
        try {
            JsonNode node = McpJson.JSON.readTree(Files.readString(file, StandardCharsets.UTF_8));
            return new SignIn(node.path("server").asText(), URI.create(node.path("resource").asText()),
                    URI.create(node.path("issuer").asText()), URI.create(node.path("token_endpoint").asText()),
                    node.path("client_id").asText(), text(node, "client_secret"),
                    node.path("client_auth").asText("client_secret_post"), text(node, "refresh_token"),
                    text(node, "access_token"), Instant.ofEpochSecond(node.path("expires_at").asLong()),
                    node.path("account").asText(), Instant.ofEpochSecond(node.path("signed_in_at").asLong()),
                    text(node, "scope"));
        } catch (IOException | RuntimeException e) {
            // a damaged file is no sign-in: signing in again writes a good one
            return null;
        }
    }

    private static String text(JsonNode node, String field) {
        return node.path(field).isTextual() ? node.get(field).asText() : null;
    }

    /** Keeps {@code signIn} for its server's URL: written whole to an owner-only file, then moved in place. */
    void save(URI url, SignIn signIn) {
        Path file = file(url);
        ObjectNode node = McpJson.JSON.createObjectNode();
        node.put("server", signIn.server());
        node.put("resource", signIn.resource().toString());
        node.put("issuer", signIn.issuer().toString());
        node.put("token_endpoint", signIn.tokenEndpoint().toString());
        node.put("client_id", signIn.clientId());
        node.put("client_secret", signIn.clientSecret());
        node.put("client_auth", signIn.clientAuth());
        node.put("refresh_token", signIn.refreshToken());
        node.put("access_token", signIn.accessToken());
        node.put("expires_at", signIn.expiresAt().getEpochSecond());
        node.put("account", signIn.account());
        node.put("signed_in_at", signIn.signedInAt().getEpochSecond());
        node.put("scope", signIn.scope());
        try {
            ownerOnlyDirectory();
            Path written = Files.createTempFile(directory, "sign-in", ".tmp", PosixFilePermissions.asFileAttribute(OWNER_FILE));
            try {
                Files.writeString(written, node.toString(), StandardCharsets.UTF_8);
                try {
                    Files.move(written, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(written, file, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(written);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot keep the sign-in in " + directory + ": " + e.getMessage(), e);
        }
        lastRead.remove(file);
    }

    /**
     * Runs {@code action} while no other thread or process works on the sign-in to {@code url}: a
     * refresh token may be good for one use only, so two refreshes at once would sign the person out.
     */
    <T> T locked(URI url, Supplier<T> action) {
        Path file = file(url);
        ReentrantLock local = LOCKS.computeIfAbsent(file, any -> new ReentrantLock());
        local.lock();
        try {
            ownerOnlyDirectory();
            Path lockFile = directory.resolve(file.getFileName() + ".lock");
            try (FileChannel channel = FileChannel.open(lockFile, Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE),
                    PosixFilePermissions.asFileAttribute(OWNER_FILE)); FileLock held = channel.lock()) {
                return action.get();
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot lock the sign-in in " + directory + ": " + e.getMessage(), e);
        } finally {
            local.unlock();
        }
    }

    private void ownerOnlyDirectory() throws IOException {
        if (!Files.isDirectory(directory)) {
            Files.createDirectories(directory, PosixFilePermissions.asFileAttribute(OWNER_DIRECTORY));
        }
        // whatever made it (an umask, an older directory), only its owner may open it
        Files.setPosixFilePermissions(directory, OWNER_DIRECTORY);
    }

    /** The file of a server URL: a digest of the URL, so that the name says nothing and any URL fits. */
    Path file(URI url) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(url.normalize().toString()
                    .getBytes(StandardCharsets.UTF_8));
            return directory.resolve(HexFormat.of().formatHex(digest, 0, 16) + ".json");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform must provide SHA-256", e);
        }
    }

    /**
     * One sign-in. Its tokens and the client's secret never leave this package and its file.
     *
     * @param resource what the tokens are for (RFC 8707), as the server's metadata names it
     * @param clientAuth how the client authenticates at the token endpoint: {@code none},
     *     {@code client_secret_basic} or {@code client_secret_post}
     * @param expiresAt when the access token expires
     * @param scope the scope the sign-in asked for, or null for none
     */
    record SignIn(String server, URI resource, URI issuer, URI tokenEndpoint, String clientId, String clientSecret,
            String clientAuth, String refreshToken, String accessToken, Instant expiresAt, String account,
            Instant signedInAt, String scope) {
        SignIn withTokens(String access, String refresh, Instant expires) {
            return new SignIn(server, resource, issuer, tokenEndpoint, clientId, clientSecret, clientAuth,
                    refresh == null ? refreshToken : refresh, access, expires, account, signedInAt, scope);
        }

        /** Names the server and the account, never a token or secret. */
        @Override
        public String toString() {
            return "SignIn[server=" + server + ", account=" + account + ", issuer=" + issuer + "]";
        }
    }
}
