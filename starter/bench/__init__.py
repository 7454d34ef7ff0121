"""starter/bench"""
