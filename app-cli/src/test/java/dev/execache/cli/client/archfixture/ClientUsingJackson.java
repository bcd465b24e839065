package dev.execache.cli.client.archfixture;

import com.fasterxml.jackson.databind.ObjectMapper;

/** Breaks the thin client's rule on purpose: a class of the client that uses Jackson. */
public final class ClientUsingJackson {
    public ObjectMapper mapper;
}
