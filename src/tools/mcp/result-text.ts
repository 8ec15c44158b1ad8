// Turns an MCP tool result into the text the model sees: text content joined, every other kind of content described; pure.
import { humanBytes } from "../../byte-size.js";
import type { CallToolResult } from "./sdk.js";

type Content = CallToolResult["content"][number];

/**
 * Each content item on its own line(s): text as it is; an image or audio clip as its MIME type and
 * size; an embedded resource as its URI (then its text, when it has some); a link as its URI. With
 * no content, the structured content as JSON. Unbounded: the caller bounds it as it bounds any tool's output.
 */
export function resultText(result: Pick<CallToolResult, "content" | "structuredContent">): string {
  const parts = (result.content ?? []).map(describeContent);
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join("\n");
}

function describeContent(item: Content): string {
  switch (item.type) {
    case "text":
      return item.text;
    case "image":
      return `[image: ${item.mimeType}, ${humanBytes(base64Bytes(item.data))}]`;
    case "audio":
      return `[audio: ${item.mimeType}, ${humanBytes(base64Bytes(item.data))}]`;
    case "resource_link":
      return `[resource link: ${item.uri}${item.name ? ` (${item.name})` : ""}${item.mimeType ? `, ${item.mimeType}` : ""}]`;
    case "resource": {
      const { resource } = item;
      const mime = resource.mimeType ? `, ${resource.mimeType}` : "";
      if ("text" in resource && typeof resource.text === "string") return `[resource: ${resource.uri}${mime}]\n${resource.text}`;
      const size = "blob" in resource && typeof resource.blob === "string" ? `, ${humanBytes(base64Bytes(resource.blob))}` : "";
      return `[resource: ${resource.uri}${mime}${size}]`;
    }
    default:
      return `[${(item as { type: string }).type} content]`;
  }
}

/** The decoded size of base64 text, without decoding it. */
export function base64Bytes(data: string): number {
  const clean = data.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

