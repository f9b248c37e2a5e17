"""What a provider receives: the OpenAI and Anthropic views of a request, the protocol rules
they are checked against, and prompt-cache prefixes."""
