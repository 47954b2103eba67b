def hint(visits):
    return "Answer briefly." if visits > 1 else "Greet the user first."


def shout(text):
    return text.upper() + "!"
