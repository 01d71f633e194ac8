/**
 * A scripted speech recogniser for LiveKit Agents tests: a subclass of the library's public
 * `stt.STT` / `stt.SpeechStream` that answers each utterance of audio with a scripted final
 * transcript (text, confidence, diarized speaker) bracketed by start/end of speech, as a
 * streaming STT provider does. Everything downstream (audio input, AudioRecognition, turn
 * commit, AgentActivity) is the real library. No STT model or server runs on this machine.
 */
import { AudioFrame } from '@livekit/rtc-node';
import { ReadableStream, type ReadableStreamDefaultController } from 'node:stream/web';
import { stt, voice } from '@livekit/agents';

export interface ScriptedUtterance {
  text: string;
  confidence: number;
  speakerId?: string;
}

class ScriptedStream extends stt.SpeechStream {
  label = 'scripted-stt.stream';
  constructor(
    owner: stt.STT,
    private readonly script: ScriptedUtterance[],
  ) {
    super(owner);
  }

  protected async run(): Promise<void> {
    // One utterance per pushed frame.
    for await (const data of this.input) {
      if (data === stt.SpeechStream.FLUSH_SENTINEL) continue;
      const next = this.script.shift();
      if (!next) continue;
      this.queue.put({ type: stt.SpeechEventType.START_OF_SPEECH });
      this.queue.put({
        type: stt.SpeechEventType.FINAL_TRANSCRIPT,
        alternatives: [{ text: next.text, language: 'en' as never, startTime: 0, endTime: 1, confidence: next.confidence, speakerId: next.speakerId }],
      });
      this.queue.put({ type: stt.SpeechEventType.END_OF_SPEECH });
    }
  }
}

export class ScriptedSTT extends stt.STT {
  label = 'scripted-stt';
  constructor(private readonly script: ScriptedUtterance[]) {
    super({ streaming: true, interimResults: false, diarization: true });
  }
  protected async _recognize(): Promise<stt.SpeechEvent> {
    throw new Error('scripted STT streams only');
  }
  stream(): stt.SpeechStream {
    return new ScriptedStream(this, this.script);
  }
}

/** An audio input the test feeds frame by frame (the room's microphone track, without a room). */
export class ScriptedAudioInput extends voice.AudioInput {
  private controller!: ReadableStreamDefaultController<AudioFrame>;
  constructor() {
    super();
    this.multiStream.addInputStream(new ReadableStream<AudioFrame>({ start: (c) => void (this.controller = c) }) as never);
  }
  /** 50 ms of silence at 16 kHz: enough for the scripted STT to say its next utterance. */
  speak(): void {
    const samples = 800;
    this.controller.enqueue(new AudioFrame(new Int16Array(samples), 16_000, 1, samples));
  }
}
