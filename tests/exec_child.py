"""A tiny production process speaking the exec provider's protocol (candor_eval/lots/child.py), for the tests.

One JSON request per stdin line, one JSON line back. What it does with a request is named by the request's
``id``, or by ``EXEC_PLAN`` (a JSON object ``{"<id>/<run>": behaviour}``) when it names that call:

ok (any other id)   answer {"type": "item", "item": {...}, "imageNotes": "<id> <pid> <n images>"}, version
echo                answer the request itself (without the images: their count), version
env                 answer the sorted names of its environment
crash               write "boom" on stderr, exit with status 3
exit0               exit with status 0 without answering
garbage             write a line that is not JSON
silent              sleep for a minute
flood               write 8 MiB on stderr, then answer
secret              answer, version and error text holding the value of EXEC_SECRET
secret-error        an error whose message holds the value of EXEC_SECRET
fatal               {"error": {"message": "no nameplate", "transient": false}}
transient           a transient error at this process's first such request, then an answer
twolines            two answer lines for one request
huge                one line of 3000 characters
"""
import json
import os
import sys
import time

PLAN = json.loads(os.environ.get("EXEC_PLAN", "{}"))
BEHAVIOURS = {"echo", "env", "crash", "exit0", "garbage", "silent", "flood", "secret", "secret-error", "fatal",
              "transient", "twolines", "huge"}
seen = {"transient": 0}


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def answer(req):
    return {"type": "item", "item": {"itemManufacturer": "Dell", "itemModel": "OptiPlex 7090"},
            "imageNotes": f"{req['id']} {os.getpid()} {len(req['images'])}"}


def main():
    for line in sys.stdin:
        req = json.loads(line)
        what = PLAN.get(f"{req['id']}/{req['run']}") or (req["id"] if req["id"] in BEHAVIOURS else "ok")
        if what == "ok":
            send({"answer": answer(req), "version": "tiny 1.0"})
        elif what == "echo":
            send({"answer": {k: v for k, v in req.items() if k != "images"} | {"images": len(req["images"]),
                                                                             "pid": os.getpid()},
                  "version": "tiny 1.0"})
        elif what == "env":
            send({"answer": {"env": sorted(os.environ)}})
        elif what == "crash":
            sys.stderr.write("boom\n")
            sys.stderr.flush()
            os._exit(3)
        elif what == "exit0":
            sys.exit(0)
        elif what == "garbage":
            print("Loading model weights... done", flush=True)
        elif what == "silent":
            time.sleep(60)
        elif what == "flood":
            chunk = "x" * 1023 + "\n"
            for _ in range(8 * 1024):
                sys.stderr.write(chunk)
            sys.stderr.write("flood done\n")
            sys.stderr.flush()
            send({"answer": answer(req)})
        elif what == "secret":
            s = os.environ["EXEC_SECRET"]
            send({"answer": {"note": f"token {s} word {s.split()[-1]}"}, "version": f"v {s}"})
        elif what == "secret-error":
            sys.stderr.write(f"using {os.environ['EXEC_SECRET']}\n")
            sys.stderr.flush()
            send({"error": {"message": f"refused {os.environ['EXEC_SECRET']}", "transient": False}})
        elif what == "fatal":
            send({"error": {"message": "no nameplate", "transient": False}})
        elif what == "transient":
            seen["transient"] += 1
            if seen["transient"] == 1:
                send({"error": {"message": "busy", "transient": True}})
            else:
                send({"answer": "fine"})
        elif what == "twolines":
            sys.stdout.write(json.dumps({"answer": "one"}) + "\n" + json.dumps({"answer": "two"}) + "\n")
            sys.stdout.flush()
        elif what == "huge":
            send({"answer": "y" * 3000})


if __name__ == "__main__":
    main()
