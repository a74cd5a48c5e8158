"""A busy desktop for the computer benchmark: one Tk window covering a 1280x800 screen with what
screenshots of real applications hold (a title bar, a sidebar of list items, paragraphs of text,
a grid of coloured buttons, a photo-like gradient with noise), so that PNG encoding works on
realistic pixels rather than on an empty black root. Deterministic: the same pixels every run.

    DISPLAY=:N python3 tests/bench/computer_scene.py
"""

import random
import tkinter as tk

WIDTH, HEIGHT = 1280, 800
WORDS = (
    "agent environment episode frame driver screenshot click keyboard pointer session tool card "
    "snapshot restore fork journal component instance store world interface capability grant"
).split()


def photo(width: int, height: int, rng: random.Random) -> tk.PhotoImage:
    image = tk.PhotoImage(width=width, height=height)
    rows = []
    for y in range(height):
        row = []
        for x in range(width):
            r = (x * 255 // width + rng.randrange(24)) % 256
            g = (y * 255 // height + rng.randrange(24)) % 256
            b = ((x + y) * 127 // (width + height) + rng.randrange(24)) % 256
            row.append(f"#{r:02x}{g:02x}{b:02x}")
        rows.append("{" + " ".join(row) + "}")
    image.put(" ".join(rows))
    return image


def main() -> None:
    rng = random.Random(7)
    root = tk.Tk()
    root.overrideredirect(True)
    root.geometry(f"{WIDTH}x{HEIGHT}+0+0")
    canvas = tk.Canvas(root, width=WIDTH, height=HEIGHT, highlightthickness=0, bg="#f4f4f4")
    canvas.pack()
    canvas.create_rectangle(0, 0, WIDTH, 36, fill="#2d3e50", outline="")
    canvas.create_text(16, 18, anchor="w", text="envhost — computer benchmark scene", fill="white",
                       font=("DejaVu Sans", 13, "bold"))
    canvas.create_rectangle(0, 36, 220, HEIGHT, fill="#e3e7eb", outline="")
    for i in range(30):
        canvas.create_text(16, 56 + i * 24, anchor="w", font=("DejaVu Sans", 10),
                           text=f"{i + 1:02d}  {rng.choice(WORDS)} {rng.choice(WORDS)}")
    for i in range(22):
        line = " ".join(rng.choice(WORDS) for _ in range(10))
        canvas.create_text(240, 56 + i * 18, anchor="w", font=("DejaVu Sans", 10), text=line)
    colours = ["#e74c3c", "#3498db", "#2ecc71", "#f1c40f", "#9b59b6", "#1abc9c", "#e67e22"]
    for row in range(4):
        for col in range(6):
            x, y = 240 + col * 170, 470 + row * 40
            canvas.create_rectangle(x, y, x + 150, y + 30, fill=rng.choice(colours), outline="#333")
            canvas.create_text(x + 75, y + 15, text=f"{rng.choice(WORDS)}", font=("DejaVu Sans", 10))
    image = photo(320, 200, rng)
    canvas.create_image(940, 60, anchor="nw", image=image)
    canvas.create_text(940, 270, anchor="nw", font=("DejaVu Sans", 9), text="a photo-like region")
    root.mainloop()


if __name__ == "__main__":
    main()
