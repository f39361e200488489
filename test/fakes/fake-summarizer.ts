/** A Summarizer fake: scripted by a function (text, rejection or a hang), recording every request it gets. */
import type { Summarizer, SummaryRequest } from "../../src/contracts.js";

export class FakeSummarizer implements Summarizer {
  readonly requests: SummaryRequest[] = [];
  constructor(private readonly respond: (request: SummaryRequest, call: number) => string | Promise<string> = () => "a summary") {}
  async summarize(request: SummaryRequest): Promise<string> {
    this.requests.push(request);
    return this.respond(request, this.requests.length);
  }
}

/** Never settles and ignores its signal: the caller's timeout must abandon it. */
export function hang(): Promise<string> {
  return new Promise<string>(() => undefined);
}
