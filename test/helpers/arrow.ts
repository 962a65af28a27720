/** Reading Arrow IPC streams in tests with apache-arrow's own reader. */
import { type MessageHeader, MessageReader } from 'apache-arrow';

/** The header types of a stream's messages, as apache-arrow's message reader finds them. */
export function messageTypes(bytes: Buffer): MessageHeader[] {
  const reader = new MessageReader(bytes);
  const types: MessageHeader[] = [];
  for (let message = reader.readMessage(); message; message = reader.readMessage()) {
    types.push(message.headerType);
    reader.readMessageBody(message.bodyLength);
  }
  return types;
}
