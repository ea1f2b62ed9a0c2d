// The two classes the functions use from @langchain/aws, for chat-model.ts and embeddings.ts to
// import lazily. A dynamic import of the package itself keeps every export of it in the bundle,
// its Kendra and Knowledge Base retrievers with their SDK clients (74 KB of chat's Bedrock chunk);
// importing this module instead lets the bundler leave those out.
export { BedrockEmbeddings, ChatBedrockConverse } from "@langchain/aws";
