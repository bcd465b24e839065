package dev.execache.cli.client.archfixture;

/** Breaks the thin client's rule on purpose: a class of the client that uses Jackson. */
public final class ClientUsingJackson {
    public com.fasterxml.jackson.databind.ObjectMapper mapper;
}
